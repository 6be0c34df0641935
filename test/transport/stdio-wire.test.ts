// gaggle's stdio end read as raw lines: unreadable input gets JSON-RPC's error replies and the session goes on.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeConfig } from "../helpers/gaggle.js";
import { CLI, fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { waitGone } from "../helpers/processes.js";

let gaggle: ChildProcessWithoutNullStreams;
let stderr = "";
/** gaggle's stdout lines as written: JSON.parse would round an id beyond 2^53. */
const replies: string[] = [];
let waiters: Array<() => void> = [];

/** Sends raw text on gaggle's stdin and waits until `count` more lines came back on its stdout, as written. */
async function exchangeLines(text: string, count = 1): Promise<string[]> {
  const from = replies.length;
  gaggle.stdin.write(text);
  while (replies.length < from + count) await new Promise<void>((resolve) => waiters.push(resolve));
  return replies.slice(from, from + count);
}

/** Sends raw text on gaggle's stdin and waits until `count` more lines came back on its stdout, parsed. */
async function exchange(text: string, count = 1): Promise<Array<Record<string, unknown>>> {
  return (await exchangeLines(text, count)).map((line) => JSON.parse(line) as Record<string, unknown>);
}

beforeAll(async () => {
  const config = writeConfig(`${NO_BUILT_INS}\n${fixtureChild("echo", "echo.mjs")}\n${fixtureChild("written", "as-written.mjs")}`);
  gaggle = spawn(process.execPath, [CLI, "--config", config], { stdio: "pipe" });
  gaggle.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  let partial = "";
  gaggle.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop()!;
    replies.push(...lines);
    const ready = waiters;
    waiters = [];
    for (const wake of ready) wake();
  });
  const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } };
  const [initialized] = await exchange(`${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: init })}\n`);
  expect(initialized).toMatchObject({ id: 0, result: { serverInfo: { name: "gaggle" } } });
  gaggle.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
});

afterAll(async () => {
  gaggle.stdin.end();
  expect(await waitGone([gaggle.pid!])).toEqual([]);
});

describe("gaggle's stdio end", () => {
  it("answers a line that is not JSON with -32700 and id null, then serves the next request", async () => {
    const [parseError, answer] = await exchange(
      `{"jsonrpc":"2.0","id":1,"method":\n${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })}\n`,
      2,
    );
    expect(parseError).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect((parseError!.error as { message: string }).message).toMatch(/^not JSON: /);
    expect(answer).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    // What was wrong is logged as a reason, not as a fault of gaggle's with a stack trace.
    await expect.poll(() => stderr).toContain('"msg":"unreadable message from the client, answered with an error"');
    expect(stderr).not.toContain('"stack"');
  });

  it("answers a malformed request with -32600 under its own id, saying what was wrong", async () => {
    const [reply] = await exchange(`${JSON.stringify({ jsonrpc: "2.0", id: "bad-params", method: "tools/call", params: "echo" })}\n`);
    expect(reply).toEqual({ jsonrpc: "2.0", id: "bad-params", error: { code: -32600, message: '"params" must be an object, found "echo"' } });
    expect(stderr).toContain("unreadable message from the client");
  });

  it("answers a request with a member JSON-RPC does not define with -32600 naming it", async () => {
    const [reply] = await exchange(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", extra: 1 })}\n`);
    expect(reply).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32600, message: 'unexpected member "extra": a request or notification has only "jsonrpc", "id", "method" and "params"' },
    });
  });

  it("answers a request whose _meta the SDK could not read with -32600", async () => {
    const [reply] = await exchange(`${JSON.stringify({ jsonrpc: "2.0", id: "token", method: "ping", params: { _meta: { progressToken: 1.5 } } })}\n`);
    expect(reply).toEqual({
      jsonrpc: "2.0",
      id: "token",
      error: { code: -32600, message: '"params._meta.progressToken" must be a string or an integer, found 1.5' },
    });
  });

  it("echoes an integer id beyond 2^53 exactly as it was written, refusing it with -32600", async () => {
    const [reply] = await exchangeLines('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}\n');
    expect(reply).toContain('"id":9007199254740993,');
    expect(reply).toContain('"code":-32600');
    expect(reply).toContain("send it as a string");
  });

  it("answers 100k-deep ids, methods and params with -32600, and lives on to serve the next request", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const lines = [
      `{"jsonrpc":"2.0","id":"deep-params","method":"ping","params":{"a":${deep}}}`,
      `{"jsonrpc":"2.0","id":"deep-method","method":${deep}}`,
      `{"jsonrpc":"2.0","id":"deep-token","method":"tools/list","params":{"_meta":{"progressToken":${deep}}}}`,
      `{"jsonrpc":${deep},"id":"deep-version","method":"ping"}`,
      `{"jsonrpc":"2.0","id":${deep},"method":"ping"}`,
      JSON.stringify({ jsonrpc: "2.0", id: "after", method: "ping" }),
    ];
    const answers = await exchange(lines.map((line) => `${line}\n`).join(""), lines.length);
    expect(answers.map((answer) => [answer.id, (answer.error as { code?: number } | undefined)?.code])).toEqual([
      ["deep-params", -32600],
      ["deep-method", -32600],
      ["deep-token", -32600],
      ["deep-version", -32600],
      [null, -32600],
      ["after", undefined],
    ]);
    expect((answers[0]!.error as { message: string }).message).toBe("nested more than 512 deep: gaggle reads arrays and objects up to 512 levels");
  });

  it("answers a tools/call without a tool name with -32602 before anything runs", async () => {
    const [reply] = await exchange(`${JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { arguments: {} } })}\n`);
    expect(reply).toEqual({
      jsonrpc: "2.0",
      id: 4,
      error: { code: -32602, message: "tools/call needs params.name, the tool's name as a string; found nothing" },
    });
    const [badArgs] = await exchange(
      `${JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "execute_child_tool", arguments: [1] } })}\n`,
    );
    expect(badArgs).toMatchObject({ id: 5, error: { code: -32602, message: "tools/call params.arguments must be an object; found [1]" } });
  });

  it("answers params of the wrong type with -32602 naming the param and what it must be", async () => {
    const request = (id: number, method: string, params: unknown) => `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;
    const lines = [
      request(10, "initialize", { protocolVersion: 5, capabilities: {}, clientInfo: { name: "raw", version: "0" } }),
      request(11, "prompts/get", { name: 5 }),
      request(12, "completion/complete", { ref: 5, argument: { name: "a", value: "b" } }),
      request(13, "logging/setLevel", { level: "loud" }),
      request(14, "completion/complete", { ref: { type: "ref/prompt" }, argument: { name: "a" } }),
    ];
    const answers = await exchange(lines.join(""), lines.length);
    expect(answers).toEqual([
      { jsonrpc: "2.0", id: 10, error: { code: -32602, message: "params.protocolVersion must be a string; found 5" } },
      { jsonrpc: "2.0", id: 11, error: { code: -32602, message: "params.name must be a string; found 5" } },
      { jsonrpc: "2.0", id: 12, error: { code: -32602, message: "params.ref must be an object; found 5" } },
      {
        jsonrpc: "2.0",
        id: 13,
        error: {
          code: -32602,
          message: 'params.level must be one of "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"; found "loud"',
        },
      },
      {
        jsonrpc: "2.0",
        id: 14,
        error: { code: -32602, message: "params.ref.name must be a string; found nothing. params.argument.value must be a string; found nothing" },
      },
    ]);
  });

  it("sends nothing for a call the client cancelled", async () => {
    const execute = (id: string, tool: string, args: Record<string, unknown>) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "execute_child_tool", arguments: { server_id: "echo", tool_name: tool, arguments: args } },
      });
    const cancelled = JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "sleeper", reason: "changed my mind" },
    });
    // The cancelled call settles inside gaggle before the next line is read, so any reply to it would come first.
    const [next] = await exchange(`${execute("sleeper", "sleep", { ms: 60_000 })}\n${cancelled}\n${execute("after", "echo", { text: "after" })}\n`);
    expect(next).toMatchObject({ id: "after", result: { content: [{ type: "text", text: "after" }] } });
  });

  it("passes a child's answer through after the errors", async () => {
    const call = {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "execute_child_tool", arguments: { server_id: "echo", tool_name: "echo", arguments: { text: "still here" } } },
    };
    const [reply] = await exchange(`${JSON.stringify(call)}\n`);
    expect(reply).toMatchObject({ id: 3, result: { content: [{ type: "text", text: "still here" }] } });
  });

  it("passes a child's answer on as the child wrote it, with only the id changed", async () => {
    const call = {
      jsonrpc: "2.0",
      id: "as-written",
      method: "tools/call",
      params: { name: "execute_child_tool", arguments: { server_id: "written", tool_name: "as_written" } },
    };
    const [line] = await exchangeLines(`${JSON.stringify(call)}\n`);
    // The result as fixtures/as-written.mjs writes it: 1.50, an integer beyond 2^53 and an escape survive.
    const written = '{"content":[{"type":"text","text":"caf\\u00e9"}],"structuredContent":{"n":1.50,"big":12345678901234567890}}';
    expect(line).toBe(`{"result":${written},"jsonrpc":"2.0","id":"as-written"}`);
  });
});

describe("a person at a terminal", () => {
  it("is told in plain words what gaggle is doing, how to stop it, how to add it to a client and serve HTTP; a client's pipe is not", async () => {
    const config = writeConfig(NO_BUILT_INS);
    // `script` gives gaggle a terminal for stdin, as a person typing `gaggle` would.
    const terminal = spawn("script", ["-qec", `${process.execPath} ${CLI} --config ${config}`, "/dev/null"], { stdio: "pipe" });
    let atTerminal = "";
    terminal.stdout.setEncoding("utf8").on("data", (chunk: string) => (atTerminal += chunk));
    await expect.poll(() => atTerminal, { timeout: 10_000 }).toContain("add it to a client");
    // Closing the terminal hangs gaggle up.
    terminal.kill("SIGTERM");
    await once(terminal, "exit");
    expect(atTerminal).toContain(`gaggle: serving MCP on stdio with ${config}.`);
    expect(atTerminal).toContain("stop it with Ctrl-C");
    expect(atTerminal).toContain(`claude mcp add gaggle -- node ${CLI} --config ${config}`);
    // The same program, so the line works where `gaggle` is not on PATH.
    expect(atTerminal).toContain(`or serve HTTP:       node ${CLI} --config ${config} --http 127.0.0.1:8765`);
    expect(stderr).not.toContain("serving MCP on stdio with");
  });
});
