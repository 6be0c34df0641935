// A client that stops reading costs gaggle a bounded queue: logs and progress dropped and counted, then the child left unread.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { request, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpGaggle } from "../helpers/gaggle-http.js";
import { startHttpFixture } from "../helpers/http-fixture.js";
import { envelope, modernRequest } from "../helpers/modern-http.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { INITIALIZE, MCP_POST_HEADERS, postMcp } from "../helpers/raw-http.js";
import { RawStdioGaggle, residentKib, watchResident } from "../helpers/raw-stdio.js";

/** About 200 MB of log messages while the client reads nothing: without a bound, well past the bound below. */
const FLOOD = 25_000;
/** Each message's size: large, so the flood's bytes are reached with few messages (the test's time goes per message). */
const FLOOD_BYTES = 8 * 1024;
/** Over HTTP the same: without a bound, the SDK's stream queue held all of it. */
const HTTP_FLOOD = 25_000;
/** gaggle's resident memory must stay under this while its client does not read (the issue saw 1.7 GB). */
const RESIDENT_BOUND_KIB = 250 * 1024;

const DROPPED = /^gaggle dropped (\d+) log\/progress notifications while this client was not reading$/;

let gaggle: RawStdioGaggle | undefined;

afterEach(async () => {
  await gaggle?.close();
  gaggle = undefined;
});

/** A config with the log-flood fixture as child `flood`, which marks in the returned file how far it got. */
function floodConfig(): { config: string; mark: string } {
  const mark = join(mkdtempSync(join(tmpdir(), "gaggle-flood-")), "mark");
  const child = fixtureChild("flood", "log-flood.mjs", `env = { FLOOD_MARK = ${JSON.stringify(mark)} }`);
  return { config: `${NO_BUILT_INS}\n${child}`, mark };
}

/** What the warnings say was dropped, in all. */
function droppedIn(warnings: Array<Record<string, unknown>>): number {
  let dropped = 0;
  for (const warning of warnings) {
    const params = warning.params as { level: string; data: string };
    expect(params.level).toBe("warning");
    dropped += Number(DROPPED.exec(params.data)?.[1]);
  }
  return dropped;
}

function loggerOf(message: Record<string, unknown>): string | undefined {
  return (message.params as { logger?: string } | undefined)?.logger;
}

function marks(mark: string): string[] {
  return existsSync(mark) ? readFileSync(mark, "utf8").split("\n").filter(Boolean) : [];
}

function callFlood(tool: string, id: string, args: Record<string, unknown>): Record<string, unknown> {
  return { id, method: "tools/call", params: { name: "execute_child_tool", arguments: { server_id: "flood", tool_name: tool, arguments: args } } };
}

describe("a stdio client that stops reading", () => {
  it("costs gaggle a bounded queue: log messages past it are dropped, counted in one warning, and the call is answered", async () => {
    const { config, mark } = floodConfig();
    gaggle = new RawStdioGaggle(config);
    await gaggle.initialize();
    gaggle.stopReading();
    const resident = watchResident(gaggle.pid);
    gaggle.send(callFlood("flood", "flood", { count: FLOOD, bytes: FLOOD_BYTES }));
    // The child writes its answer after every log message has been read from it.
    await expect.poll(() => marks(mark), { timeout: 150_000, interval: 100 }).toContain("flood answered");
    // A few more samples, while gaggle handles the last of what it read.
    await delay(500);
    const peakKib = resident.stop();
    expect(peakKib).toBeLessThan(RESIDENT_BOUND_KIB);

    gaggle.resumeReading();
    const answer = await gaggle.answerTo("flood");
    expect(answer).toMatchObject({ result: { content: [{ type: "text", text: `flooded ${FLOOD}` }] } });
    const notes = gaggle.messages.filter((message) => message.method === "notifications/message");
    const logs = notes.filter((note) => loggerOf(note) === "flood/flood");
    const warnings = notes.filter((note) => loggerOf(note) === "gaggle");
    expect(warnings.length).toBeGreaterThan(0);
    const dropped = droppedIn(warnings);
    // Every message is either delivered or counted, and the count comes before the answer.
    expect(logs.length + dropped).toBe(FLOOD);
    expect(dropped).toBeGreaterThan(0);
    expect(gaggle.messages.indexOf(warnings.at(-1)!)).toBeLessThan(gaggle.messages.indexOf(answer));
    expect(gaggle.stderr).not.toContain("MaxListenersExceededWarning");
  }, 240_000);

  it("leaves a child's output unread while its answers wait for the client, and reads it again once the client does", async () => {
    const calls = 30;
    const bytes = 4 * 1024 * 1024;
    const { config, mark } = floodConfig();
    gaggle = new RawStdioGaggle(config);
    await gaggle.initialize();
    const before = residentKib(gaggle.pid);
    gaggle.stopReading();
    const resident = watchResident(gaggle.pid);
    for (let i = 0; i < calls; i++) gaggle.send(callFlood("big", `big-${i}`, { bytes }));
    // The first answers fill the client's queue, the next waits past it; the one after that is left in the child.
    await expect.poll(() => gaggle!.stderr, { timeout: 60_000 }).toContain("the child's output waits unread");
    expect(marks(mark).filter((line) => line === "big answered").length).toBeLessThan(calls);
    const peakKib = resident.stop();
    expect(peakKib - before).toBeLessThan(100 * 1024);

    gaggle.resumeReading();
    for (let i = 0; i < calls; i++) {
      const answer = (await gaggle.answerTo(`big-${i}`)) as { result: { content: Array<{ text: string }> } };
      expect(answer.result.content[0]!.text).toHaveLength(bytes);
    }
    expect(gaggle.stderr).toContain("reading the child's output again");
    expect(gaggle.stderr).not.toContain("MaxListenersExceededWarning");
  }, 240_000);
});

describe.each([
  { type: "http", path: "/mcp" },
  { type: "sse", path: "/sse" },
])("a stdio client that stops reading, with a remote child ($type)", ({ type, path }) => {
  it("leaves the child's answers unread in the network while they wait for the client, and reads them again once it does", async () => {
    const calls = 30;
    // Each answer: one text of 4,000 lines of 1,000 characters (about 4 MB).
    const lines = { count: 4000, prefix: "x".repeat(994) };
    const expected = Array.from({ length: lines.count }, (_, i) => `${lines.prefix} ${i + 1}`).join("\n");
    const remote = await startHttpFixture();
    try {
      const child = `[mcp_servers.remote]\ntype = "${type}"\nurl = ${JSON.stringify(`${remote.origin}${path}`)}\n`;
      gaggle = new RawStdioGaggle(`${NO_BUILT_INS}\n${child}`);
      await gaggle.initialize();
      const before = residentKib(gaggle.pid);
      gaggle.stopReading();
      const resident = watchResident(gaggle.pid);
      const call = (id: string) => ({
        id,
        method: "tools/call",
        params: { name: "execute_child_tool", arguments: { server_id: "remote", tool_name: "lines", arguments: lines } },
      });
      for (let i = 0; i < calls; i++) gaggle.send(call(`lines-${i}`));
      await expect.poll(() => gaggle!.stderr, { timeout: 60_000 }).toContain("the child's output waits unread");
      // A call is sent once the one before it was answered (concurrency 1): the held answer stops the rest.
      const served = () =>
        remote
          .stderr()
          .split("\n")
          .filter((line) => line.includes("call lines")).length;
      expect(served()).toBeLessThan(calls);
      const peakKib = resident.stop();
      expect(peakKib - before).toBeLessThan(100 * 1024);

      gaggle.resumeReading();
      for (let i = 0; i < calls; i++) {
        const answer = (await gaggle.answerTo(`lines-${i}`)) as { result: { content: Array<{ text: string }> } };
        expect(answer.result.content[0]!.text).toHaveLength(expected.length);
      }
      expect(served()).toBe(calls);
      expect(gaggle.stderr).toContain("reading the child's output again");
    } finally {
      await remote.stop();
    }
  }, 240_000);
});

describe("an HTTP client that stops reading a call's stream", () => {
  it("costs gaggle a bounded queue: log messages past it are dropped, counted on that stream, and the call is answered", async () => {
    const { config, mark } = floodConfig();
    const http = await startHttpGaggle(config);
    try {
      const init = await postMcp(http.port, INITIALIZE);
      const session = init.headers["mcp-session-id"] as string;
      await postMcp(http.port, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), { "mcp-session-id": session });
      const resident = watchResident(http.pid);
      const call = { jsonrpc: "2.0", ...callFlood("flood", "flood", { count: HTTP_FLOOD, bytes: FLOOD_BYTES }) };
      const stream = await postUnread(http.port, JSON.stringify(call), session);
      await expect.poll(() => marks(mark), { timeout: 150_000, interval: 100 }).toContain("flood answered");
      await delay(500);
      const peakKib = resident.stop();
      expect(peakKib).toBeLessThan(RESIDENT_BOUND_KIB);

      const events = await readEvents(stream);
      const answer = events.find((event) => event.id === "flood");
      expect(answer).toMatchObject({ result: { content: [{ type: "text", text: `flooded ${HTTP_FLOOD}` }] } });
      const logs = events.filter((event) => loggerOf(event) === "flood/flood");
      const warnings = events.filter((event) => loggerOf(event) === "gaggle");
      const dropped = droppedIn(warnings);
      expect(dropped).toBeGreaterThan(0);
      expect(logs.length + dropped).toBe(HTTP_FLOOD);
      expect(events.indexOf(warnings.at(-1)!)).toBeLessThan(events.indexOf(answer!));
      expect(http.stderr()).not.toContain("MaxListenersExceededWarning");
    } finally {
      await http.stop();
    }
  }, 240_000);
});

describe("a 2026-07-28 HTTP client that stops reading its request's stream", () => {
  it("costs gaggle a bounded queue: log messages past it are dropped and counted before the answer", async () => {
    const { config, mark } = floodConfig();
    const http = await startHttpGaggle(config);
    try {
      const resident = watchResident(http.pid);
      const { params } = callFlood("flood", "flood", { count: HTTP_FLOOD, bytes: FLOOD_BYTES }) as { params: Record<string, unknown> };
      const meta = envelope({ "io.modelcontextprotocol/logLevel": "info" });
      const response = await modernRequest(http.port, { id: "flood", method: "tools/call", params: { ...params, _meta: meta } });
      response.message.pause();
      await expect.poll(() => marks(mark), { timeout: 150_000, interval: 100 }).toContain("flood answered");
      await delay(500);
      const peakKib = resident.stop();
      expect(peakKib).toBeLessThan(RESIDENT_BOUND_KIB);

      response.message.resume();
      const frames = await response.all();
      const answer = frames.at(-1)!;
      expect(answer).toMatchObject({ id: "flood", result: { content: [{ type: "text", text: `flooded ${HTTP_FLOOD}` }] } });
      const logs = frames.filter((frame) => loggerOf(frame) === "flood/flood");
      const dropped = droppedIn(frames.filter((frame) => loggerOf(frame) === "gaggle"));
      expect(dropped).toBeGreaterThan(0);
      expect(logs.length + dropped).toBe(HTTP_FLOOD);
    } finally {
      await http.stop();
    }
  }, 240_000);
});

/** POSTs `body` to the session and resolves with its response stream, which nothing reads until readEvents. */
function postUnread(port: number, body: string, session: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers = { ...MCP_POST_HEADERS, "mcp-session-id": session };
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/mcp", headers, agent: false }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Reads an SSE response to its end; the JSON-RPC messages of its events. */
async function readEvents(res: IncomingMessage): Promise<Array<Record<string, unknown>>> {
  let text = "";
  res.setEncoding("utf8");
  for await (const chunk of res) text += chunk as string;
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice("data: ".length)) as Record<string, unknown>);
}
