// gaggle serving stdio reads its input whatever kind of descriptor stdin is: a pipe (every other test), a file, a socket.
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { createServer, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeConfig } from "../helpers/gaggle.js";
import { CLI, NO_BUILT_INS, STATE_DIR, fixtureChild } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";

const config = writeConfig([fixtureChild("echo", "echo.mjs"), NO_BUILT_INS].join("\n"));

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
const lines = (...messages: object[]) => messages.map((message) => JSON.stringify(message) + "\n").join("");

type Message = Record<string, unknown>;

/**
 * A standalone gaggle with `stdin` as its standard input: the messages it writes, its exit code once it ends, and
 * what it wrote to stderr.
 */
function serve(stdin: number | Socket): { messages: Message[]; exited: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, [CLI, "--standalone", "--config", config], {
    env: { ...process.env, XDG_STATE_HOME: STATE_DIR },
    stdio: [stdin, "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const messages: Message[] = [];
  let partial = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop()!;
    for (const line of parts) if (line !== "") messages.push(JSON.parse(line) as Message);
  });
  return { messages, exited: new Promise((resolve) => child.on("close", resolve)), stderr: () => stderr };
}

describe("gaggle's stdin", () => {
  it("is read from a file to its end, each request answered, and gaggle stops there", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "gaggle-stdin-")), "requests.jsonl");
    writeFileSync(path, lines(INITIALIZE, INITIALIZED, { jsonrpc: "2.0", id: 2, method: "ping" }));
    const fd = openSync(path, "r");
    try {
      const { messages, exited } = serve(fd);
      expect(await exited).toBe(0);
      expect(messages.find((message) => message.id === 1)?.result).toMatchObject({ serverInfo: { name: "gaggle" } });
      expect(messages.find((message) => message.id === 2)).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    } finally {
      closeSync(fd);
    }
  });

  it("is read from a socket, a character cut across two reads kept whole, and gaggle stops at its end", async () => {
    let accepted!: (socket: Socket) => void;
    const arrived = new Promise<Socket>((resolve) => (accepted = resolve));
    // Paused: the socket's bytes are gaggle's to read, not this process's.
    const server = createServer({ pauseOnConnect: true }, accepted);
    const path = join(mkdtempSync(join(tmpdir(), "gaggle-stdin-")), "socket");
    await new Promise<void>((resolve) => server.listen(path, resolve));
    const client = connect(path);
    const ours = await arrived;
    try {
      const { messages, exited, stderr } = serve(ours);
      const call = {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "execute_child_tool", arguments: { server_id: "echo", tool_name: "echo", arguments: { text: "caf\u00e9 \u2603" } } },
      };
      const bytes = Buffer.from(lines(INITIALIZE, INITIALIZED, call), "utf8");
      const cut = bytes.indexOf(Buffer.from("\u2603", "utf8")) + 1;
      client.write(bytes.subarray(0, cut));
      await until(() => messages.some((message) => message.id === 1), Boolean);
      client.write(bytes.subarray(cut));
      await until(() => messages.some((message) => message.id === 2), Boolean);
      expect(messages.find((message) => message.id === 2)?.result).toEqual({ content: [{ type: "text", text: "caf\u00e9 \u2603" }] });
      client.end();
      expect(await exited).toBe(0);
      // Nothing failed the start once the socket was read (asking process.stdin whether it is a terminal would have:
      // a second handle on the descriptor, refused with EEXIST, and the start's last steps left undone).
      expect(stderr()).not.toMatch(/^gaggle: /m);
    } finally {
      ours.destroy();
      client.destroy();
      server.close();
    }
  });
});
