// Every pairing of a child's era with a client's era, for each behaviour that crosses gaggle: a 2025-only child, a
// 2026-07-28-only child and a child of both eras (reached in 2025-11-25 over stdio, in 2026-07-28 over HTTP), each
// from a 2025 client (the SDK's client, a session) and from a 2026-07-28 client (raw requests, no session), for
// sampling, elicitation, roots, logging, progress, resource subscriptions and cancellation.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConformanceFixture, type ConformanceFixture } from "../../helpers/conformance-fixture.js";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { envelope, modernRequest, type ModernResponse } from "../../helpers/modern-http.js";
import { fixture, NO_BUILT_INS } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

/** What a client answers a child's questions with, in either era. */
function answer(request: { method: string; params?: Record<string, unknown> }): Record<string, unknown> {
  if (request.method === "sampling/createMessage")
    return { role: "assistant", content: { type: "text", text: "Paris" }, model: "m", stopReason: "endTurn" };
  if (request.method === "roots/list") return { roots: [{ uri: "file:///one", name: "One" }] };
  const schema = request.params?.requestedSchema as { properties?: Record<string, { type?: string }> } | undefined;
  const fields = Object.entries(schema?.properties ?? {}).filter(([, field]) => field.type === "string");
  return { action: "accept", content: Object.fromEntries(fields.map(([name]) => [name, "Alice"])) };
}

/** Calls a tool (a meta-tool, or one of the child's under gaggle's name for it) and returns its text. */
type Ask = (name: string, args?: Record<string, unknown>) => Promise<string>;

interface Call {
  tool: string;
  args?: Record<string, unknown>;
}

/** Whether a cancellable call got to run at the child, and whether the child then saw it cancelled. */
interface CancelWatch {
  /** Absent when the call reports progress once it runs at the child: that tells it, and asks nothing of the child. */
  started?(): Promise<boolean>;
  cancelled(): Promise<boolean>;
}

interface Subject {
  era: "2025-11-25" | "2026-07-28";
  config(): string;
  sampling: Call;
  elicitation: Call;
  roots: Call;
  logging: Call;
  progress: Call;
  resource: string;
  update: Call;
  /** Answers with the request's _meta in its text. */
  metaEcho: Call;
  cancellable: Call;
  /**
   * `ask` calls a tool as the client whose call is cancelled: a child serves one client at a time, so another
   * client's question would wait for the call it asks about.
   */
  watchCancel(ask: Ask): Promise<CancelWatch>;
}

/** A W3C trace context, as the 2026-07-28 era carries it in `_meta`. */
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text;

/** The SDK-built legacy fixture (fixtures/protocol.mjs): its stderr tells what it ran and what it saw cancelled. */
const LEGACY: Subject = {
  era: "2025-11-25",
  config: () => `command = ${JSON.stringify(process.execPath)}\nargs = ${JSON.stringify([fixture("protocol.mjs")])}`,
  sampling: { tool: "sample", args: { prompt: "The capital of France?" } },
  elicitation: { tool: "elicit", args: { message: "Who are you?" } },
  roots: { tool: "roots" },
  logging: { tool: "log", args: { level: "warning", message: "careful" } },
  progress: { tool: "progress", args: { steps: 3 } },
  resource: "fixture://counter",
  update: { tool: "bump" },
  metaEcho: { tool: "meta_echo" },
  cancellable: { tool: "slow_cancel", args: { ms: 30_000 } },
  watchCancel: async (ask) => {
    const sinceLastCall = async () => {
      const status = JSON.parse(await ask("get_child_status", { server_id: "child" })) as { stderr: string[] };
      const at = status.stderr.lastIndexOf("call slow_cancel");
      return at === -1 ? undefined : status.stderr.slice(at + 1);
    };
    return {
      started: async () => (await sinceLastCall())?.includes("cancelled slow_cancel") === false,
      cancelled: async () => (await sinceLastCall())?.includes("cancelled slow_cancel") === true,
    };
  },
};

/** The conformance fixture: the same tools in both eras; test_cancelled_calls counts what it ran and saw cancelled. */
function conformanceSubject(era: Subject["era"], config: () => string): Subject {
  const counts = async (ask: Ask) => JSON.parse(await ask("child__test_cancelled_calls")) as { started: number; cancelled: number };
  return {
    era,
    config,
    sampling: { tool: "test_sampling", args: { prompt: "The capital of France?" } },
    elicitation: { tool: "test_elicitation", args: { message: "Who are you?" } },
    roots: { tool: "test_input_required_result_list_roots" },
    logging: { tool: "test_tool_with_logging" },
    progress: { tool: "test_tool_with_progress" },
    resource: "test://watched-resource",
    update: { tool: "test_trigger_resource_update" },
    metaEcho: { tool: "test_echo_meta" },
    cancellable: { tool: "test_wait_for_cancel" },
    watchCancel: async (ask) => {
      const before = await counts(ask);
      return { cancelled: async () => (await counts(ask)).cancelled > before.cancelled };
    },
  };
}

let both: ConformanceFixture;
const conformance = (args: string[]) =>
  `command = ${JSON.stringify(process.execPath)}\nargs = ${JSON.stringify([fixture("conformance-server.mjs"), ...args])}`;

const SUBJECTS: Record<string, Subject> = {
  "a 2025-only child": LEGACY,
  "a 2026-07-28-only child": conformanceSubject("2026-07-28", () => conformance(["--modern-only"])),
  "a child of both eras over stdio": conformanceSubject("2026-07-28", () => conformance([])),
  "a child of both eras over HTTP, held to 2025-11-25": conformanceSubject(
    "2025-11-25",
    () => `type = "http"\nurl = ${JSON.stringify(both.url)}\nprotocol = "2025-11-25"`,
  ),
};

beforeAll(async () => {
  both = await startConformanceFixture();
});

afterAll(async () => {
  await both?.stop();
});

describe.each(Object.entries(SUBJECTS))("%s", (_title, subject) => {
  let gaggle: HttpGaggle;
  let legacy: Client;
  const logs: unknown[] = [];
  const updated: string[] = [];

  beforeAll(async () => {
    gaggle = await startHttpGaggle(
      ['[gateway]\nexpose = "both"\nlist_wait_ms = 30000\n', NO_BUILT_INS, `[mcp_servers.child]\n${subject.config()}\n`].join("\n"),
    );
    legacy = await gaggle.connect({ client: { capabilities: { sampling: {}, elicitation: {}, roots: {} } } });
    for (const schema of [CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema]) {
      legacy.setRequestHandler(schema, (request) => answer(request) as never);
    }
    legacy.setNotificationHandler(LoggingMessageNotificationSchema, (note) => void logs.push(note.params.data));
    legacy.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => void updated.push(note.params.uri));
  });

  afterAll(async () => {
    await legacy?.close();
    await gaggle?.stop();
  });

  it(`is reached in ${subject.era}`, async () => {
    await legacy.callTool({ name: "get_schema", arguments: { server_id: "child" } });
    const status = JSON.parse(text(await legacy.callTool({ name: "get_child_status", arguments: { server_id: "child" } })));
    expect(status.protocol).toBe(subject.era);
  });

  describe("from a 2025 client", () => {
    const call = ({ tool, args = {} }: Call, options?: Parameters<Client["callTool"]>[2]) =>
      legacy.callTool({ name: `child__${tool}`, arguments: args }, undefined, options);

    it("sampling, elicitation and roots: the child's questions reach the client, and its answers the child", async () => {
      expect(text(await call(subject.sampling))).toContain("Paris");
      expect(text(await call(subject.elicitation))).toContain("Alice");
      expect(text(await call(subject.roots))).toContain("file:///one");
    });

    it("logging and progress reach the client", async () => {
      await legacy.setLoggingLevel("debug");
      const before = logs.length;
      await call(subject.logging);
      expect(logs.length).toBeGreaterThan(before);
      const progress: unknown[] = [];
      await call(subject.progress, { onprogress: (step) => void progress.push(step) });
      expect(progress.length).toBeGreaterThan(0);
    });

    it("the request's _meta (a traceparent) reaches the child as the client wrote it", async () => {
      const result = await legacy.callTool({ name: `child__${subject.metaEcho.tool}`, arguments: {}, _meta: { traceparent: TRACEPARENT } });
      expect(text(result)).toContain(TRACEPARENT);
    });

    it("a subscribed resource's updates reach the client", async () => {
      await legacy.subscribeResource({ uri: subject.resource });
      const before = updated.length;
      await call(subject.update);
      await until(
        () => updated.slice(before),
        (uris) => uris.includes(subject.resource),
      );
      await legacy.unsubscribeResource({ uri: subject.resource });
    });

    it("a call the client cancels is cancelled at the child", async () => {
      const watch = await subject.watchCancel(async (name, args = {}) => text(await legacy.callTool({ name, arguments: args })));
      const controller = new AbortController();
      let progressed = false;
      const pending = call(subject.cancellable, { signal: controller.signal, onprogress: () => void (progressed = true) });
      await until(watch.started ?? (async () => progressed), Boolean);
      controller.abort("the user gave up");
      await expect(pending).rejects.toThrow();
      await until(watch.cancelled, Boolean);
    });
  });

  describe("from a 2026-07-28 client", () => {
    const CAPABLE = { "io.modelcontextprotocol/clientCapabilities": { sampling: {}, elicitation: {}, roots: {} } };
    let nextId = 1;
    const send = (method: string, params: Record<string, unknown>, meta: Record<string, unknown> = {}, signal?: AbortSignal) =>
      modernRequest(gaggle.port, { id: nextId++, method, params: { ...params, _meta: envelope({ ...CAPABLE, ...meta }) } }, signal);
    const final = async (response: ModernResponse) => (await response.all()).at(-1) as { result?: Record<string, unknown>; error?: unknown };

    /** Calls the tool, answering every round of input it asks for, and returns the final result. */
    async function callAnswering({ tool, args = {} }: Call): Promise<Record<string, unknown>> {
      let retry: Record<string, unknown> = {};
      for (let round = 0; round < 5; round++) {
        const { result, error } = await final(await send("tools/call", { name: `child__${tool}`, arguments: args, ...retry }));
        expect(error).toBeUndefined();
        if (result?.resultType !== "input_required") return result!;
        const questions = Object.entries(result.inputRequests as Record<string, { method: string; params?: Record<string, unknown> }>);
        retry = { inputResponses: Object.fromEntries(questions.map(([key, request]) => [key, answer(request)])), requestState: result.requestState };
      }
      throw new Error(`${tool} still asked for input after 5 rounds`);
    }

    it("sampling, elicitation and roots: the questions come as input_required, and the retry's answers reach the child", async () => {
      expect(text(await callAnswering(subject.sampling))).toContain("Paris");
      expect(text(await callAnswering(subject.elicitation))).toContain("Alice");
      expect(text(await callAnswering(subject.roots))).toContain("file:///one");
    });

    it("logging at the level the request names, and progress under its token, come on the request's own stream", async () => {
      const logged = await send(
        "tools/call",
        { name: `child__${subject.logging.tool}`, arguments: subject.logging.args ?? {} },
        { "io.modelcontextprotocol/logLevel": "debug" },
      );
      expect((await logged.all()).some((frame) => frame.method === "notifications/message")).toBe(true);
      const progressed = await send(
        "tools/call",
        { name: `child__${subject.progress.tool}`, arguments: subject.progress.args ?? {} },
        { progressToken: "p-1" },
      );
      const frames = await progressed.all();
      expect(
        frames.some((frame) => frame.method === "notifications/progress" && (frame.params as { progressToken?: unknown }).progressToken === "p-1"),
      ).toBe(true);
    });

    it("the request's _meta (a traceparent) reaches the child beside the envelope", async () => {
      const { result } = await final(
        await send("tools/call", { name: `child__${subject.metaEcho.tool}`, arguments: {} }, { traceparent: TRACEPARENT }),
      );
      expect(text(result)).toContain(TRACEPARENT);
    });

    it("a listen stream that names the resource hears its updates", async () => {
      const controller = new AbortController();
      const stream = await send("subscriptions/listen", { notifications: { resourceSubscriptions: [subject.resource] } }, {}, controller.signal);
      const [ack] = await stream.waitFor(1);
      expect(ack).toMatchObject({
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { resourceSubscriptions: [subject.resource] } },
      });
      await callAnswering(subject.update);
      const [, update] = await stream.waitFor(2);
      expect(update).toMatchObject({ method: "notifications/resources/updated", params: { uri: subject.resource } });
      controller.abort();
    });

    it("closing a call's response stream cancels the call at the child", async () => {
      const watch = await subject.watchCancel(async (name, args = {}) =>
        text((await final(await send("tools/call", { name, arguments: args }))).result),
      );
      const controller = new AbortController();
      // Without progress to stream, the response may not begin before the call ends: closing the connection is enough.
      const call = { name: `child__${subject.cancellable.tool}`, arguments: subject.cancellable.args ?? {} };
      const pending = send("tools/call", call, watch.started ? {} : { progressToken: "c-1" }, controller.signal);
      if (watch.started) await until(watch.started, Boolean);
      else await (await pending).waitFor(1);
      controller.abort();
      await pending.catch(() => {});
      await until(watch.cancelled, Boolean);
    });
  });
});
