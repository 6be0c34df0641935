import { once } from "node:events";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJsonResource, textOf } from "../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { fixtureChild } from "../helpers/paths.js";
import { descendants, isAlive, waitGone } from "../helpers/processes.js";
import { until } from "../helpers/poll.js";
import { httpTransportOf, postMcp, TOOLS_LIST } from "../helpers/raw-http.js";

interface Summary {
  connected_clients: number;
  total_children: number;
}

const config = fixtureChild("echo", "echo.mjs");
const IDLE_MS = 1000;

let gaggle: HttpGaggle;
let idle: HttpGaggle;

beforeAll(async () => {
  [gaggle, idle] = await Promise.all([
    startHttpGaggle(config),
    startHttpGaggle(`[gateway]\nsession_idle_timeout_ms = ${IDLE_MS}\n\n${config}\n${fixtureChild("proto", "protocol.mjs")}`),
  ]);
});
afterAll(async () => {
  await Promise.allSettled([gaggle?.stop(), idle?.stop()]);
});

const connectedClients = async (client: Client) => (await readJsonResource<Summary>(client, "mcp://server_summary")).connected_clients;
const sessionIdOf = (client: Client) => {
  const id = httpTransportOf(client).sessionId;
  if (!id) throw new Error("the client has no session id after initialize");
  return id;
};
/** A raw tools/list on a session: 200 while it lives, 404 once it is gone. */
const statusOfSession = async (on: HttpGaggle, sessionId: string) => (await postMcp(on.port, TOOLS_LIST, { "mcp-session-id": sessionId })).status;
const echo = async (client: Client, text: string) =>
  textOf(
    (await client.callTool({
      name: "execute_child_tool",
      arguments: { server_id: "echo", tool_name: "echo", arguments: { text } },
    })) as CallToolResult,
  );

describe("sessions", () => {
  it("gives each client a session of its own, and counts them in mcp://server_summary", async () => {
    const a = await gaggle.connect({ name: "client-a" });
    const b = await gaggle.connect({ name: "client-b" });
    const [idA, idB] = [sessionIdOf(a), sessionIdOf(b)];
    expect(idA).not.toBe(idB);
    // Each counts from its first request after initialize (reading the summary is one).
    expect(await connectedClients(a)).toBe(1);
    expect(await connectedClients(b)).toBe(2);
    expect(await connectedClients(a)).toBe(2);
    expect(await connectedClients(b)).toBe(2);
    expect(await statusOfSession(gaggle, idA)).toBe(200);
    expect(await statusOfSession(gaggle, idB)).toBe(200);
    // Both reach the one child the clients share.
    expect(await Promise.all([echo(a, "from a"), echo(b, "from b")])).toEqual(["from a", "from b"]);
    await Promise.all([httpTransportOf(a).terminateSession(), httpTransportOf(b).terminateSession()]);
  });

  it("releases a session on DELETE: the client count drops and its id gets 404 from then on", async () => {
    const a = await gaggle.connect({ name: "client-a" });
    const b = await gaggle.connect({ name: "client-b" });
    await a.listTools();
    expect(await connectedClients(b)).toBe(2);
    const [idA, idB] = [sessionIdOf(a), sessionIdOf(b)];

    await httpTransportOf(a).terminateSession();
    expect(
      await until(
        () => connectedClients(b),
        (n) => n === 1,
      ),
    ).toBe(1);
    expect(await statusOfSession(gaggle, idA)).toBe(404);
    // The log says whose session ended, as it said whose opened.
    const closed = await until(
      () =>
        gaggle
          .stderr()
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as { msg: string; session?: string; principal?: string })
          .find((line) => line.msg === "client session closed" && line.session === idA),
      (line) => line !== undefined,
    );
    expect(closed!.principal).toBe("local");
    // The other session is untouched.
    expect(await echo(b, "still here")).toBe("still here");
    expect(await statusOfSession(gaggle, idB)).toBe(200);
    await httpTransportOf(b).terminateSession();
    expect(await statusOfSession(gaggle, idB)).toBe(404);
  });

  it("closes a session left idle for session_idle_timeout_ms, and keeps one in use", async () => {
    const sleeper = await idle.connect({ name: "sleeper" });
    // A request after initialize: a session that never makes one is closed sooner (see the next case).
    await sleeper.listTools();
    // The sleeper's last request has just been answered: its session may not close sooner than the timeout.
    const started = Date.now();
    const busy = await idle.connect({ name: "busy" });
    const idSleeper = sessionIdOf(sleeper);
    expect(await connectedClients(busy)).toBe(2);
    // A request on the sleeper's session would keep it alive, so the busy client watches the count instead;
    // its own reads every 50 ms (well under the timeout) keep its session open meanwhile.
    expect(
      await until(
        () => connectedClients(busy),
        (n) => n === 1,
        10_000,
      ),
    ).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS / 2);
    expect(await statusOfSession(idle, idSleeper)).toBe(404);
    expect(await echo(busy, "awake")).toBe("awake");
    expect(idle.stderr()).toContain("client session idle; closing");
  });

  it("counts as connected only the sessions that made a request after initialize, and closes the others sooner", async () => {
    // session_idle_timeout_ms of 6 s: one that never makes a request is kept half of that; the log line tells which
    // of the two limits closed it.
    const checked = await startHttpGaggle(`[gateway]\nsession_idle_timeout_ms = 6000\n\n${config}`);
    try {
      const healthCheck = await checked.connect({ name: "health-check" });
      const user = await checked.connect({ name: "user" });
      await user.listTools();
      const idCheck = sessionIdOf(healthCheck);
      // The health check's session is open, but it is no client at work.
      expect(await connectedClients(user)).toBe(1);
      await until(
        () => checked.stderr(),
        (stderr) => stderr.includes("client session made no request; closing"),
        20_000,
      );
      expect(await statusOfSession(checked, idCheck)).toBe(404);
      expect(await echo(user, "still here")).toBe("still here");
      expect(await connectedClients(user)).toBe(1);
      expect(checked.stderr()).not.toContain("client session idle; closing");
    } finally {
      await checked.stop();
    }
  });

  it("cancels a session's calls at the child when the session ends with them in flight", async () => {
    const watcher = await idle.connect({ name: "watcher" });
    const protoStderr = async () =>
      (
        JSON.parse(textOf((await watcher.callTool({ name: "get_child_status", arguments: { server_id: "proto" } })) as CallToolResult)) as {
          stderr: string[];
        }
      ).stderr;
    const count = (lines: string[], text: string) => lines.filter((line) => line.includes(text)).length;
    const before = await protoStderr();
    const leaving = await idle.connect({ name: "leaving" });
    const call = leaving.callTool({
      name: "execute_child_tool",
      arguments: { server_id: "proto", tool_name: "slow_cancel", arguments: { ms: 20_000 } },
    });
    call.catch(() => {});
    await until(protoStderr, (lines) => count(lines, "call slow_cancel") > count(before, "call slow_cancel"));
    await httpTransportOf(leaving).terminateSession();
    const after = await until(protoStderr, (lines) => count(lines, "cancelled slow_cancel") > count(before, "cancelled slow_cancel"));
    expect(count(after, "notification notifications/cancelled")).toBeGreaterThan(count(before, "notification notifications/cancelled"));
  });

  it("refuses a request whose id is in use by one still being answered, and answers both the first and later ones", async () => {
    const client = await idle.connect({ name: "reuser" });
    const headers = { "mcp-session-id": sessionIdOf(client), "mcp-protocol-version": "2025-11-25" };
    const call = (id: number, ms: number) =>
      postMcp(
        idle.port,
        JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "execute_child_tool", arguments: { server_id: "proto", tool_name: "slow_cancel", arguments: { ms } } },
        }),
        headers,
      );
    const first = call(7, 800);
    // The first is at the child once the proto child has a call running.
    await until(
      async () => {
        const status = await client.callTool({ name: "get_child_status", arguments: { server_id: "proto" } });
        return (JSON.parse(textOf(status as CallToolResult)) as { queue: { running: number } }).queue.running;
      },
      (running) => running === 1,
    );
    const reused = await postMcp(idle.port, JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" }), headers);
    expect(reused.status).toBe(400);
    expect(JSON.parse(reused.body)).toMatchObject({ id: 7, error: { code: -32600, message: expect.stringContaining("id 7 is already in use") } });
    const answered = await first;
    expect(answered.status).toBe(200);
    expect(answered.body).toContain("waited 800");
    // Once answered, the id is free again.
    expect((await postMcp(idle.port, JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" }), headers)).status).toBe(200);
  });

  it("does not close a session whose call is still running as idle", async () => {
    const client = await idle.connect({ name: "patient" });
    const ms = IDLE_MS * 2;
    const result = await client.callTool(
      { name: "execute_child_tool", arguments: { server_id: "proto", tool_name: "slow_cancel", arguments: { ms } } },
      undefined,
      { timeout: ms + 5000 },
    );
    expect(textOf(result as CallToolResult)).toBe(`waited ${ms}`);
    expect(await statusOfSession(idle, sessionIdOf(client))).toBe(200);
  });
});

describe("shutdown", () => {
  it("leaves no child process alive after SIGTERM, with client sessions still open", async () => {
    const doomed = await startHttpGaggle(
      [fixtureChild("eager", "echo.mjs", 'startup = "eager"'), fixtureChild("lazy", "echo.mjs"), fixtureChild("proto", "protocol.mjs")].join("\n"),
    );
    try {
      const client = await doomed.connect();
      const [other] = await Promise.all([doomed.connect(), echo(client, "x")]);
      const status = async (server_id: string) =>
        JSON.parse(textOf((await client.callTool({ name: "get_child_status", arguments: { server_id } })) as CallToolResult)) as {
          status: string;
          pid: number;
        };
      await client.callTool({ name: "execute_child_tool", arguments: { server_id: "proto", tool_name: "log_level" } });
      await other.callTool({ name: "execute_child_tool", arguments: { server_id: "lazy", tool_name: "echo", arguments: { text: "y" } } });
      const eager = await until(
        () => status("eager"),
        (s) => s.status === "running",
      );
      const childPids = [eager.pid, (await status("lazy")).pid, (await status("proto")).pid];

      const before = descendants(doomed.pid);
      expect(before).toEqual(expect.arrayContaining(childPids));
      childPids.forEach((pid) => expect(isAlive(pid)).toBe(true));

      // The exit code comes from the exit event: polling /proc can see the process gone before Node reports it.
      const exited = once(doomed.process, "exit", { signal: AbortSignal.timeout(15_000) });
      doomed.process.kill("SIGTERM");
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
      expect(await waitGone(before, 10_000)).toEqual([]);
    } finally {
      await doomed.stop();
    }
  });
});
