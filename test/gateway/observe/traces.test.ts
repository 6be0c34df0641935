// Traces of real requests, received by a local OTLP/HTTP endpoint: a SERVER span per client request whose parent is
// the client's traceparent, a CLIENT span per request to a child, and the child hearing gaggle's span in its _meta.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { startGaggle, textOf, writeConfig, type RunningGaggle } from "../../helpers/gaggle.js";
import { CLI, fixture, fixtureChild, NO_BUILT_INS } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string } }>;
  status?: { code?: number; message?: string };
}

const SERVER = 2;
const CLIENT = 3;
const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;

const attribute = (span: OtlpSpan, key: string) => span.attributes.find((entry) => entry.key === key)?.value.stringValue;
const child = (name: string, args: string[]) =>
  `[mcp_servers.${name}]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ${JSON.stringify(args)}\n`;

describe("traces to an OTLP endpoint", () => {
  let receiver: Server;
  const spans: OtlpSpan[] = [];
  const received: Array<{ path: string; type: string | undefined; spans: number }> = [];
  let gaggle: RunningGaggle;

  beforeAll(async () => {
    // A collector's OTLP/HTTP traces endpoint, as the specification has it: JSON export requests, answered 200.
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        const request = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        const sent = request.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
        received.push({ path: req.url ?? "", type: req.headers["content-type"], spans: sent.length });
        spans.push(...sent);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    }).listen(0, "127.0.0.1");
    await once(receiver, "listening");
    const { port } = receiver.address() as { port: number };
    const config = `${NO_BUILT_INS}\n${child("legacy", [fixture("protocol.mjs")])}\n${child("modern", [fixture("conformance-server.mjs"), "--modern-only"])}`;
    gaggle = await startGaggle(config, {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "1",
        OTEL_SERVICE_NAME: "gaggle-under-test",
      },
    });
  });
  afterAll(async () => {
    await gaggle?.close();
    receiver?.closeAllConnections();
    receiver?.close();
  });

  it.each([
    ["legacy", "meta_echo", "2025"],
    ["modern", "test_echo_meta", "2026-07-28"],
  ])("a call to a %s child: SERVER span under the client's, CLIENT span under it, the child told of the CLIENT span", async (name, tool, era) => {
    const result = await gaggle.client.callTool({
      name: "execute_child_tool",
      arguments: { server_id: name, tool_name: tool, arguments: {} },
      _meta: { traceparent: TRACEPARENT },
    });
    const text = textOf(result as never);
    const meta = (name === "legacy" ? (JSON.parse(text) as { requestMeta: Record<string, string> }).requestMeta : JSON.parse(text)) as Record<
      string,
      string
    >;

    const server = await until(
      () =>
        spans.find(
          (span) =>
            span.kind === SERVER &&
            span.parentSpanId === CLIENT_SPAN &&
            spans.some((other) => other.kind === CLIENT && other.parentSpanId === span.spanId && attribute(other, "gaggle.child") === name),
        ),
      (found) => found !== undefined,
    );
    const clientSpan = spans.find((span) => span.kind === CLIENT && span.parentSpanId === server!.spanId)!;
    expect(server!.traceId).toBe(CLIENT_TRACE);
    expect(server!.name).toBe("tools/call execute_child_tool");
    expect(attribute(server!, "mcp.method.name")).toBe("tools/call");
    expect(attribute(server!, "gen_ai.tool.name")).toBe("execute_child_tool");
    expect(attribute(server!, "gen_ai.operation.name")).toBe("execute_tool");
    expect(attribute(server!, "mcp.session.id")).toBe("stdio");
    expect(attribute(server!, "network.transport")).toBe("pipe");
    // The version the client's session agreed at initialize (the SDK's client asks for its latest).
    expect(attribute(server!, "mcp.protocol.version")).toBe(LATEST_PROTOCOL_VERSION);
    expect(clientSpan.traceId).toBe(CLIENT_TRACE);
    expect(clientSpan.name).toBe(`tools/call ${tool}`);
    expect(attribute(clientSpan, "gen_ai.tool.name")).toBe(tool);
    expect(attribute(clientSpan, "mcp.protocol.version")).toMatch(era === "2025" ? /^2025-/ : /^2026-07-28$/);
    // The child's request carries gaggle's CLIENT span as its parent, in either era.
    expect(meta.traceparent).toBe(`00-${CLIENT_TRACE}-${clientSpan.spanId}-01`);
    expect(received.every((entry) => entry.path === "/v1/traces" && entry.type === "application/json")).toBe(true);
  });

  it("marks a failed call with error.type and the ERROR status", async () => {
    await gaggle.client.callTool({ name: "execute_child_tool", arguments: { server_id: "nowhere", tool_name: "x", arguments: {} } });
    const failed = await until(
      () => spans.find((span) => span.kind === SERVER && attribute(span, "error.type") === "SERVER_NOT_FOUND"),
      (found) => found !== undefined,
    );
    expect(failed!.status?.code).toBe(2);
    expect(failed!.status?.message).toMatch(/no child server named "nowhere"/);
    // A call without a traceparent starts a trace of its own.
    expect(failed!.parentSpanId ?? "").toBe("");
  });

  it("batches its spans as the standard OTEL_BSP_* variables say", () => {
    // The earlier tests' spans, sent one per export request as OTEL_BSP_MAX_EXPORT_BATCH_SIZE asks.
    expect(received.length).toBeGreaterThan(1);
    expect(received.map((entry) => entry.spans)).toEqual(received.map(() => 1));
  });
});

describe("traces to an OTLP endpoint that never answers", () => {
  let hole: Server;
  beforeAll(async () => {
    // Takes each export request and never answers it.
    hole = createServer((req) => req.resume()).listen(0, "127.0.0.1");
    await once(hole, "listening");
  });
  afterAll(() => {
    hole?.closeAllConnections();
    hole?.close();
  });

  it("does not keep a stopping gaggle running: it exits by itself, saying the batched traces were dropped", async () => {
    const { port } = hole.address() as { port: number };
    const gaggle = spawn(process.execPath, [CLI, "--config", writeConfig(`${NO_BUILT_INS}\n${fixtureChild("echo", "echo.mjs")}`)], {
      // The exporter would wait for an answer far longer than any client waits for gaggle to exit.
      env: {
        ...process.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_TIMEOUT: "600000",
        OTEL_BSP_EXPORT_TIMEOUT: "600000",
        OTEL_BSP_SCHEDULE_DELAY: "600000",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    gaggle.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    gaggle.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const exited = once(gaggle, "exit");
    // A gaggle that would not stop is not left behind by a failing run.
    onTestFinished(() => {
      if (gaggle.exitCode === null && gaggle.signalCode === null) gaggle.kill("SIGKILL");
    });
    const send = (message: object) => gaggle.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    send({
      id: 1,
      method: "initialize",
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    send({ method: "notifications/initialized" });
    send({
      id: 2,
      method: "tools/call",
      params: { name: "execute_child_tool", arguments: { server_id: "echo", tool_name: "echo", arguments: { text: "traced" } } },
    });
    await until(
      () => stdout,
      (text) => text.includes('"id":2'),
    );
    // The client is done: it closes gaggle's stdin, with a span still batched.
    gaggle.stdin.end();
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(stderr).toMatch(/"subsystem":"traces".*the traces still batched are dropped: the OTLP endpoint did not take them in time/);
    expect(stderr).toContain(`http://127.0.0.1:${port}/v1/traces`);
  });
});

describe("traces to an OTLP endpoint where nothing listens", () => {
  let gaggle: RunningGaggle;
  let endpoint: string;
  beforeAll(async () => {
    // A port just freed: nothing listens there.
    const taken = createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    endpoint = `http://127.0.0.1:${(taken.address() as { port: number }).port}`;
    await new Promise((resolve) => taken.close(resolve));
    gaggle = await startGaggle(`${NO_BUILT_INS}\n${fixtureChild("echo", "echo.mjs")}`, {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_EXPORTER_OTLP_TIMEOUT: "500" },
    });
  });
  afterAll(() => gaggle?.close());

  it("answers the calls, and says in its log that the spans are dropped, where it sends them and what to check", async () => {
    const result = await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "echo", arguments: { text: "untraced" } });
    expect(textOf(result)).toContain("untraced");
    const line = await until(
      () =>
        gaggle
          .stderr()
          .split("\n")
          .find((text) => text.includes('"subsystem":"traces"')),
      (found) => found !== undefined,
    );
    const logged = JSON.parse(line!) as { level: number; endpoint: string; msg: string; reason?: string };
    expect(logged).toMatchObject({ level: 50, endpoint: `${endpoint}/v1/traces` });
    expect(logged.msg).toMatch(
      /^cannot send traces to the OTLP endpoint; spans are dropped until it takes them: check that a collector listens there/,
    );
  });
});
