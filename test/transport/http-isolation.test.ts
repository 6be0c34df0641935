import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { fixtureChild } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";

// Two HTTP clients share one child that runs up to four calls at once. Whatever the child asks for or
// reports while serving a client's call must reach that client and never the other.
const CALLS = 10;

interface Peer {
  name: "A" | "B";
  client: Client;
  /** Prompts this client's sampling handler was asked for. */
  sampled: string[];
  /** Data of every notifications/message this client received. */
  logs: Array<{ data: unknown; logger: string | undefined }>;
  errors: Error[];
}

let gaggle: HttpGaggle;
let peers: [Peer, Peer];

async function peer(name: "A" | "B"): Promise<Peer> {
  const client = await gaggle.connect({ name: `client-${name}`, client: { capabilities: { sampling: {} } } });
  const self: Peer = { name, client, sampled: [], logs: [], errors: [] };
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    const content = request.params.messages[0]?.content;
    const block = Array.isArray(content) ? content[0] : content;
    const prompt = block?.type === "text" ? block.text : JSON.stringify(content);
    self.sampled.push(prompt);
    // Held briefly so that calls overlap while their requests are outstanding.
    await new Promise((resolve) => setTimeout(resolve, 15));
    return { role: "assistant", model: `model-${name}`, content: { type: "text", text: `${name} answered ${prompt}` } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => {
    self.logs.push({ data: note.params.data, logger: note.params.logger });
  });
  client.onerror = (error) => self.errors.push(error);
  return self;
}

beforeAll(async () => {
  gaggle = await startHttpGaggle(fixtureChild("proto", "protocol.mjs", "concurrency = 4"));
  peers = [await peer("A"), await peer("B")];
});
afterAll(async () => {
  await gaggle?.stop();
});

const callProto = (p: Peer, tool: string, args: Record<string, unknown>, onprogress?: (progress: Progress) => void) =>
  p.client.callTool(
    { name: "execute_child_tool", arguments: { server_id: "proto", tool_name: tool, arguments: args } },
    undefined,
    onprogress ? { onprogress } : {},
  );

/** Runs `CALLS` calls per peer, A and B alternating, all started at once. */
function interleaved<T>(run: (p: Peer, i: number) => Promise<T>): Promise<Array<{ peer: Peer; i: number; value: T }>> {
  const jobs = Array.from({ length: CALLS }, (_, i) => peers.map((p) => run(p, i).then((value) => ({ peer: p, i, value })))).flat();
  return Promise.all(jobs);
}

const expected = (name: string, label: string) => Array.from({ length: CALLS }, (_, i) => `${name}-${label}-${i}`).sort();

describe("two HTTP clients on one child", () => {
  it("sends each client only the sampling requests of its own calls", async () => {
    const results = await interleaved((p, i) => callProto(p, "sample", { prompt: `${p.name}-prompt-${i}` }));
    for (const { peer: p, i, value } of results) {
      expect(value.isError, textOf(value as CallToolResult)).toBeFalsy();
      expect(textOf(value as CallToolResult)).toBe(`sampled: ${p.name} answered ${p.name}-prompt-${i}`);
    }
    for (const p of peers) expect([...p.sampled].sort()).toEqual(expected(p.name, "prompt"));
  });

  it("sends each client only the progress of its own calls, under its own tokens", async () => {
    // A's calls report 3 steps, B's 4: a notification delivered to the wrong client shows up as a wrong total.
    const steps = { A: 3, B: 4 };
    const results = await interleaved(async (p, i) => {
      const seen: Progress[] = [];
      const result = await callProto(p, "progress", { steps: steps[p.name] }, (progress) => seen.push(progress));
      return { seen, text: textOf(result as CallToolResult), i };
    });
    for (const { peer: p, value } of results) {
      const n = steps[p.name];
      expect(value.text).toMatch(/^done token=\S+$/);
      expect(value.text).not.toBe("done token=none");
      expect(value.seen).toEqual(Array.from({ length: n }, (_, k) => ({ progress: k + 1, total: n, message: `step ${k + 1}` })));
    }
    for (const p of peers) expect(p.errors.filter((error) => /progress/i.test(error.message))).toEqual([]);
  });

  it("sends each client only the log messages of its own calls", async () => {
    const before = peers.map((p) => p.logs.length);
    const results = await interleaved((p, i) => callProto(p, "log", { level: "info", message: `${p.name}-log-${i}` }));
    for (const { value } of results) expect(textOf(value as CallToolResult)).toBe("logged");
    // A message relayed to the wrong client would arrive no later than the right one; wait for all the right ones.
    await until(
      async () => peers.map((p, k) => p.logs.length - before[k]!),
      (counts) => counts.every((n) => n >= CALLS),
      5000,
    );
    peers.forEach((p, k) => {
      const fresh = p.logs.slice(before[k]);
      expect(fresh.map((entry) => entry.data).sort()).toEqual(expected(p.name, "log"));
      expect(new Set(fresh.map((entry) => entry.logger))).toEqual(new Set(["proto"]));
    });
  });

  it("keeps the two apart when sampling, progress and logging calls are mixed", async () => {
    const progress = { A: [] as Progress[], B: [] as Progress[] };
    const sampledBefore = peers.map((p) => p.sampled.length);
    const logsBefore = peers.map((p) => p.logs.length);
    await interleaved(async (p, i) => {
      const kind = i % 3;
      if (kind === 0) return callProto(p, "sample", { prompt: `${p.name}-mixed-${i}` });
      if (kind === 1) return callProto(p, "log", { level: "notice", message: `${p.name}-mixed-${i}` });
      return callProto(p, "progress", { steps: 2 }, (event) => progress[p.name].push(event));
    });
    const own = (name: string, kind: number) =>
      Array.from({ length: CALLS }, (_, i) => i)
        .filter((i) => i % 3 === kind)
        .map((i) => `${name}-mixed-${i}`)
        .sort();
    await until(
      async () => peers.map((p, k) => p.logs.length - logsBefore[k]!),
      (counts) => counts.every((n) => n >= own("A", 1).length),
      5000,
    );
    peers.forEach((p, k) => {
      expect([...p.sampled.slice(sampledBefore[k])].sort()).toEqual(own(p.name, 0));
      expect(
        p.logs
          .slice(logsBefore[k])
          .map((entry) => entry.data)
          .sort(),
      ).toEqual(own(p.name, 1));
      expect(progress[p.name]).toHaveLength(2 * own(p.name, 2).length);
    });
  });

  it("drops a call cancelled while it waits for the other client's calls: it frees its slot and never reaches the child", async () => {
    const [a, b] = peers;
    const status = async () =>
      JSON.parse(textOf((await a.client.callTool({ name: "get_child_status", arguments: { server_id: "proto" } })) as CallToolResult)) as {
        queue: { running: number; waiting: number };
        stderr: string[];
      };
    const calls = (lines: string[]) => lines.filter((line) => line === "call slow_cancel").length;
    const before = calls((await status()).stderr);
    const slow = callProto(a, "slow_cancel", { ms: 3000 });
    await until(status, (s) => calls(s.stderr) === before + 1, 5000);
    // B's call starts in the queue at once (the child takes four) but must wait for A's call to end.
    const controller = new AbortController();
    const waiting = b.client.callTool(
      { name: "execute_child_tool", arguments: { server_id: "proto", tool_name: "slow_cancel", arguments: { ms: 1 } } },
      undefined,
      { signal: controller.signal },
    );
    await until(status, (s) => s.queue.running === 2, 5000);
    controller.abort("B gave up");
    await expect(waiting).rejects.toThrow();
    const freed = await until(status, (s) => s.queue.running === 1, 5000);
    expect(freed.queue).toEqual({ running: 1, waiting: 0 });
    expect(textOf((await slow) as CallToolResult)).toBe("waited 3000");
    expect(calls((await status()).stderr)).toBe(before + 1);
  });
});
