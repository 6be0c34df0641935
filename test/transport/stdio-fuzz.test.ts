// Fuzzed JSON-RPC on gaggle's stdin, the bounded version of `npm run chaos`'s attack: gaggle lives through it,
// writes only JSON-RPC, answers a valid call after it, and leaves nothing behind when its client goes.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { fuzz, seeded } from "../helpers/chaos.js";
import { writeConfig } from "../helpers/gaggle.js";
import { CLI, fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { carrying, killCarrying, waitGone } from "../helpers/processes.js";

const LINES = 300;
const mark = `GAGGLE_TEST_MARK=stdio-fuzz-${randomUUID()}`;
afterAll(() => killCarrying(mark));

describe("fuzzed JSON-RPC on stdin", () => {
  it("never brings gaggle down: it answers a ping and a call after 300 generated lines, and exits clean", async () => {
    const child = fixtureChild(fuzz.FUZZ_CHILD, "echo.mjs", "concurrency = 4\ntimeout_ms = 3000\nmax_timeout_ms = 3000");
    const config = writeConfig(`[gateway]\nlog_level = "warn"\nshutdown_grace_ms = 500\n${NO_BUILT_INS}\n${child}`);
    const [name, value] = mark.split("=") as [string, string];
    const gaggle = spawn(process.execPath, [CLI, "--config", config], { stdio: "pipe", env: { ...process.env, [name]: value } });
    let logged = "";
    gaggle.stderr.setEncoding("utf8").on("data", (chunk: string) => (logged += chunk));
    const replies: unknown[] = [];
    const notJson: string[] = [];
    let partial = "";
    gaggle.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop()!;
      for (const line of lines) {
        try {
          replies.push(JSON.parse(line));
        } catch {
          notJson.push(line);
        }
      }
    });
    const answerTo = (id: string) =>
      expect.poll(() => replies.find((reply) => (reply as { id?: unknown }).id === id), { timeout: 20_000, interval: 50 }).toBeDefined();

    const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "fuzz-test", version: "0" } };
    gaggle.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: "init", method: "initialize", params: init })}\n`);
    await answerTo("init");
    gaggle.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    const lines = fuzz.fuzzLines(seeded(11));
    for (let i = 0; i < LINES; i++) {
      const { data } = lines.next(i);
      if (!gaggle.stdin.write(typeof data === "string" ? `${data}\n` : Buffer.concat([data, Buffer.from("\n")]))) {
        await new Promise((resolve) => gaggle.stdin.once("drain", resolve));
      }
    }

    gaggle.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: "ping-after", method: "ping" })}\n`);
    await answerTo("ping-after");
    const call = { name: "execute_child_tool", arguments: { server_id: fuzz.FUZZ_CHILD, tool_name: "echo", arguments: { text: "still here" } } };
    gaggle.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: "call-after", method: "tools/call", params: call })}\n`);
    await answerTo("call-after");
    expect(replies.find((reply) => (reply as { id?: unknown }).id === "call-after")).toMatchObject({
      result: { content: [{ type: "text", text: "still here" }] },
    });
    expect(notJson).toEqual([]);
    // What a client gets wrong is logged as a reason, never with a stack: the fault is not gaggle's.
    expect(logged).not.toContain('"stack"');
    expect(gaggle.exitCode).toBeNull();

    const exited = new Promise((resolve) => gaggle.once("exit", (code) => resolve(code)));
    gaggle.stdin.end();
    expect(await exited).toBe(0);
    expect(await waitGone(carrying(mark))).toEqual([]);
  });
});
