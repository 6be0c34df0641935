// MCP 2026-07-28 over stdio: a client that probes with server/discover is served per request, and one that falls back to initialize gets its session.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeConfig } from "../helpers/gaggle.js";
import { envelope, MODERN } from "../helpers/modern-http.js";
import { CLI, fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { waitGone } from "../helpers/processes.js";

type Frame = Record<string, unknown>;

let gaggle: ChildProcessWithoutNullStreams;
const frames: Frame[] = [];
let waiters: Array<() => void> = [];

function send(message: Frame): void {
  gaggle.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

/** The first frame from now on that `match` accepts; rejects after `ms`. */
async function next(match: (frame: Frame) => boolean, ms = 10_000): Promise<Frame> {
  const deadline = Date.now() + ms;
  for (let seen = 0; ;) {
    for (; seen < frames.length; seen++) if (match(frames[seen]!)) return frames.splice(seen, 1)[0]!;
    if (Date.now() > deadline) throw new Error(`no matching frame within ${ms} ms; frames: ${JSON.stringify(frames)}`);
    await new Promise<void>((resolve) => {
      waiters.push(resolve);
      setTimeout(resolve, 100).unref();
    });
  }
}

const answerTo = (id: unknown) => (frame: Frame) => frame.id === id && !("method" in frame);

beforeAll(() => {
  const config = writeConfig(
    [
      '[gateway]\nexpose = "both"\nlist_wait_ms = 30000\n',
      NO_BUILT_INS,
      fixtureChild("echo", "echo.mjs"),
      fixtureChild("protocol", "protocol.mjs"),
    ].join("\n"),
  );
  gaggle = spawn(process.execPath, [CLI, "--config", config], { stdio: "pipe" });
  let partial = "";
  gaggle.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop()!;
    for (const line of lines) frames.push(JSON.parse(line) as Frame);
    const ready = waiters;
    waiters = [];
    for (const wake of ready) wake();
  });
});

afterAll(async () => {
  gaggle.stdin.end();
  expect(await waitGone([gaggle.pid!])).toEqual([]);
});

describe("a modern client on stdio", () => {
  it("is answered server/discover, then served per request with complete results", async () => {
    send({ id: "d", method: "server/discover", params: { _meta: envelope() } });
    expect(await next(answerTo("d"))).toMatchObject({ result: { supportedVersions: [MODERN], resultType: "complete" } });
    send({ id: 1, method: "tools/call", params: { name: "echo__echo", arguments: { text: "stdio" }, _meta: envelope() } });
    expect(await next(answerTo(1))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "stdio" }], resultType: "complete" },
    });
  });

  it("a child's question ends the round input_required; the retry with its answer resumes the call", async () => {
    const asking = envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } });
    send({ id: "e1", method: "tools/call", params: { name: "protocol__elicit", arguments: { message: "Name?" }, _meta: asking } });
    const first = (await next(answerTo("e1"))).result as { resultType: string; inputRequests: Record<string, unknown>; requestState: string };
    expect(first.resultType).toBe("input_required");
    const [key, request] = Object.entries(first.inputRequests)[0]!;
    expect(request).toMatchObject({ method: "elicitation/create", params: { message: "Name?" } });
    const inputResponses = { [key]: { action: "accept", content: { name: "Ada" } } };
    send({
      id: "e2",
      method: "tools/call",
      params: { name: "protocol__elicit", arguments: {}, inputResponses, requestState: first.requestState, _meta: asking },
    });
    expect(await next(answerTo("e2"))).toMatchObject({
      result: { resultType: "complete", content: [{ text: JSON.stringify({ action: "accept", content: { name: "Ada" } }) }] },
    });
  });

  it("a request without the envelope's required keys is -32602, and removed methods -32601", async () => {
    send({ id: 2, method: "tools/list", params: { _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": undefined }) } });
    expect(await next(answerTo(2))).toMatchObject({ error: { code: -32602 } });
    send({ id: 3, method: "ping", params: { _meta: envelope() } });
    expect(await next(answerTo(3))).toMatchObject({ error: { code: -32601 } });
  });

  it("notifications/cancelled cancels a modern call: no answer comes, and the child is told", async () => {
    send({ id: 4, method: "tools/call", params: { name: "protocol__slow_cancel", arguments: { ms: 30_000 }, _meta: envelope() } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    send({ method: "notifications/cancelled", params: { requestId: 4, reason: "test" } });
    send({ id: 5, method: "tools/call", params: { name: "get_child_status", arguments: { server_id: "protocol" }, _meta: envelope() } });
    const deadline = Date.now() + 10_000;
    let status = "";
    for (let id = 6; Date.now() < deadline; id++) {
      status = JSON.stringify(await next(answerTo(id - 1)));
      if (status.includes("cancelled slow_cancel")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
      send({ id, method: "tools/call", params: { name: "get_child_status", arguments: { server_id: "protocol" }, _meta: envelope() } });
    }
    expect(status).toContain("protocol: cancelled slow_cancel");
    expect(frames.some((frame) => frame.id === 4)).toBe(false);
  });

  it("subscriptions/listen acknowledges first, tags what it sends with its id, and ends on notifications/cancelled", async () => {
    send({ id: "l", method: "subscriptions/listen", params: { notifications: { toolsListChanged: true }, _meta: envelope() } });
    expect(await next((frame) => frame.method === "notifications/subscriptions/acknowledged")).toMatchObject({
      params: { notifications: { toolsListChanged: true }, _meta: { "io.modelcontextprotocol/subscriptionId": "l" } },
    });
    send({ id: 20, method: "tools/call", params: { name: "echo__add_tool", arguments: { name: "stdio_late" }, _meta: envelope() } });
    await next(answerTo(20));
    expect(await next((frame) => frame.method === "notifications/tools/list_changed")).toMatchObject({
      params: { _meta: { "io.modelcontextprotocol/subscriptionId": "l" } },
    });
    send({ method: "notifications/cancelled", params: { requestId: "l" } });
  });
});

describe("a legacy client on the same stdio", () => {
  it("falls back to initialize after a probe and keeps a 2025-11-25 session", async () => {
    send({
      id: 100,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "legacy", version: "0" } },
    });
    expect(await next(answerTo(100))).toMatchObject({ result: { protocolVersion: "2025-11-25", serverInfo: { name: "gaggle" } } });
    send({ method: "notifications/initialized" });
    send({ id: 101, method: "tools/call", params: { name: "echo__echo", arguments: { text: "legacy" } } });
    const answer = await next(answerTo(101));
    expect(answer).toEqual({ jsonrpc: "2.0", id: 101, result: { content: [{ type: "text", text: "legacy" }] } });
  });
});
