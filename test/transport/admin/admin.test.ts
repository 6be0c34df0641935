// The admin listener of a real gaggle: health, readiness, the status document, metrics, and who may read them.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { fixtureChild, NO_BUILT_INS } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";
import { httpTransportOf } from "../../helpers/raw-http.js";
import { firstEvent, get, json, startAdminGaggle, type AdminGaggle, type Status } from "./helpers.js";

describe("readiness of a gaggle whose eager child does not start", () => {
  let gaggle: AdminGaggle;
  beforeAll(async () => {
    gaggle = await startAdminGaggle(`${NO_BUILT_INS}\n${fixtureChild("broken", "exit-at-start.mjs", 'startup = "eager"')}`);
  });
  afterAll(() => gaggle?.close());

  it("is alive but answers /readyz with 503, counting the eager child that is not running", async () => {
    expect(await json(`${gaggle.admin}healthz`)).toEqual({ status: "ok" });
    const failed = await until(
      () => gaggle.metaJson<{ status: string }>("get_child_status", { server_id: "broken" }),
      (status) => status.status === "failed",
    );
    expect(failed.status).toBe("failed");
    const ready = await get(`${gaggle.admin}readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual({ status: "not_ready", eager_children: 1, eager_not_running: 1, config_errors: 0, config_errors_at: [] });
  });
});

describe("readiness of a gaggle whose config file does not load", () => {
  let gaggle: AdminGaggle;
  const good = `${NO_BUILT_INS}\n${fixtureChild("echo", "echo.mjs")}`;
  beforeAll(async () => {
    gaggle = await startAdminGaggle(good);
  });
  afterAll(() => gaggle?.close());

  it("answers /readyz with 503 naming where the error is while it is pending, and 200 once the file is fixed", async () => {
    expect((await get(`${gaggle.admin}readyz`)).status).toBe(200);
    // An edit that does not load: the config in force stays, with the error pending.
    writeFileSync(gaggle.configPath, `[gateway]\nadmin = "127.0.0.1:0"\n\n${good}\n[mcp_servers.broken]\ncommand = 7\n`);
    const pending = await until(
      () => get(`${gaggle.admin}readyz`),
      (answer) => answer.status === 503,
    );
    expect(JSON.parse(pending.body)).toEqual({
      status: "not_ready",
      eager_children: 0,
      eager_not_running: 0,
      config_errors: 1,
      config_errors_at: ["children_config.toml: mcp_servers.broken.command"],
    });
    // The open path names where, not what: the message may quote a value of the file.
    expect(pending.body).not.toContain("number 7");

    writeFileSync(gaggle.configPath, `[gateway]\nadmin = "127.0.0.1:0"\n\n${good}\n`);
    const fixed = await until(
      () => get(`${gaggle.admin}readyz`),
      (answer) => answer.status === 200,
    );
    expect(JSON.parse(fixed.body)).toEqual({ status: "ready", eager_children: 0, eager_not_running: 0, config_errors: 0, config_errors_at: [] });
  });
});

describe("the admin listener of a stdio gaggle", () => {
  let gaggle: AdminGaggle;
  beforeAll(async () => {
    gaggle = await startAdminGaggle(
      `${NO_BUILT_INS}\n${fixtureChild("echo", "echo.mjs", 'startup = "eager"')}\n${fixtureChild("broken", "exit-at-start.mjs")}`,
    );
  });
  afterAll(() => gaggle?.close());

  it("says it is alive, and ready once its eager child runs", async () => {
    expect(await json(`${gaggle.admin}healthz`)).toEqual({ status: "ok" });
    const ready = await until(
      () => get(`${gaggle.admin}readyz`),
      (answer) => answer.status === 200,
    );
    expect(JSON.parse(ready.body)).toMatchObject({ status: "ready", eager_children: 1, eager_not_running: 0 });
  });

  it("counts a call to a child in the status document and in the metrics", async () => {
    const result = await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "echo", arguments: { text: "counted" } });
    expect(textOf(result)).toContain("counted");
    const status = await json<Status>(`${gaggle.admin}api/status`);
    const echo = status.children.find((child) => child.server_id === "echo")!;
    expect(echo).toMatchObject({ status: "running", calls: 1, errors: 0, protocol: expect.any(String) });
    expect(echo.pid).toBeGreaterThan(0);
    expect(echo.p50_ms).toBeGreaterThan(0);
    expect(status.clients).toEqual([expect.objectContaining({ principal: "local", client_name: "gaggle-test", session: "stdio" })]);
    expect(status.recent_calls[0]).toMatchObject({
      method: "tools/call",
      target: "execute_child_tool",
      child: "echo",
      outcome: "ok",
      client: "gaggle-test/0.0.0",
    });

    const metrics = (await get(`${gaggle.admin}metrics`)).body;
    expect(metrics).toMatch(
      /^mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="execute_child_tool",gen_ai_operation_name="execute_tool",gaggle_child="echo",mcp_protocol_version="2025-11-25",network_transport="pipe"\} 1$/m,
    );
    expect(metrics).toMatch(
      /^mcp_client_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="echo",gen_ai_operation_name="execute_tool",gaggle_child="echo",mcp_protocol_version="[-\d]+",network_transport="pipe"\} 1$/m,
    );
    expect(metrics).toMatch(/^gaggle_child_up\{gaggle_child="echo",state="running"\} 1$/m);
    expect(metrics).toMatch(/^gaggle_client_sessions 1$/m);
    expect(metrics).toMatch(/^process_resident_memory_bytes \d+/m);
  });

  it("labels a failed call with its error type, and never with a name a client made up", async () => {
    await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "fail", arguments: { message: "failing on purpose" } });
    await gaggle.meta("execute_child_tool", { server_id: "no-such-child-3f9a", tool_name: "x", arguments: {} });
    await gaggle.client.callTool({ name: "made_up_tool_7c1e", arguments: {} }).catch(() => undefined);
    const metrics = (await get(`${gaggle.admin}metrics`)).body;
    expect(metrics).toMatch(/mcp_client_operation_duration_seconds_count\{[^}]*gen_ai_tool_name="fail"[^}]*error_type="tool_error"[^}]*\} 1/);
    expect(metrics).toMatch(
      /mcp_server_operation_duration_seconds_count\{[^}]*gen_ai_tool_name="execute_child_tool"[^}]*error_type="SERVER_NOT_FOUND"[^}]*\} 1/,
    );
    expect(metrics).not.toMatch(/no-such-child-3f9a|made_up_tool_7c1e/);
    const status = await json<Status>(`${gaggle.admin}api/status`);
    expect(status.recent_calls[0]).toMatchObject({ target: "made_up_tool_7c1e", outcome: "error", error: "-32602" });
  });

  it("records a call its client cancelled as cancelled, not as the child's error", async () => {
    const before = (await json<Status>(`${gaggle.admin}api/status`)).children.find((child) => child.server_id === "echo")!;
    const abort = new AbortController();
    const call = gaggle.client
      .callTool({ name: "execute_child_tool", arguments: { server_id: "echo", tool_name: "sleep", arguments: { ms: 30_000 } } }, undefined, {
        signal: abort.signal,
      })
      .catch((error: unknown) => error);
    await until(
      async () => (await json<Status>(`${gaggle.admin}api/status`)).children.find((child) => child.server_id === "echo")!,
      (echo) => (echo as unknown as { queue_depth: number }).queue_depth === 1,
    );
    abort.abort("changed my mind");
    expect(String(await call)).toMatch(/changed my mind|abort/i);
    const status = await until(
      () => json<Status>(`${gaggle.admin}api/status`),
      (now) => now.recent_calls[0]?.outcome === "cancelled",
    );
    expect(status.recent_calls[0]).toMatchObject({ target: "execute_child_tool", child: "echo", outcome: "cancelled", error: null });
    const echo = status.children.find((child) => child.server_id === "echo")!;
    expect(echo).toMatchObject({ calls: before.calls + 1, errors: before.errors });
    const metrics = (await get(`${gaggle.admin}metrics`)).body;
    expect(metrics).toMatch(/mcp_client_operation_duration_seconds_count\{[^}]*gen_ai_tool_name="sleep"[^}]*error_type="CANCELLED"[^}]*\} 1/);
  });

  it("shows a child that failed to start as failed", async () => {
    await gaggle.meta("execute_child_tool", { server_id: "broken", tool_name: "x", arguments: {} });
    const status = await json<Status>(`${gaggle.admin}api/status`);
    // The call never reached a process, and counts as the child's failure all the same.
    expect(status.children.find((child) => child.server_id === "broken")).toMatchObject({
      status: "failed",
      calls: 1,
      errors: 1,
      last_error: expect.objectContaining({ type: "SERVER_FAILED" }),
    });
  });

  it("answers Host names it does not serve with 421, and unknown paths with 404", async () => {
    expect((await get(`${gaggle.admin}api/status`, { host: "attacker.example" })).status).toBe(421);
    expect((await get(`${gaggle.admin}api/status`, { origin: "http://attacker.example" })).status).toBe(403);
    expect((await get(`${gaggle.admin}mcp`)).status).toBe(404);
  });
});

describe("the admin paths beside /mcp, with two named tokens", () => {
  let gaggle: HttpGaggle;
  const alice = { authorization: "Bearer alice-token-0123456789" };
  const bob = { authorization: "Bearer bob-token-0123456789" };
  const base = () => gaggle.url.replace(/\/mcp$/, "/");
  const auditLines = () =>
    readFileSync(join(dirname(gaggle.config), "audit.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  beforeAll(async () => {
    gaggle = await startHttpGaggle(
      `[gateway]\nauth_tokens = { alice = "alice-token-0123456789", bob = "bob-token-0123456789" }\n\n[virtual.goose]\nenabled = false\n\n[virtual.team]\nenabled = false\n\n[audit]\npath = "audit.jsonl"\n\n${fixtureChild("echo", "echo.mjs")}\n${fixtureChild("proto", "protocol.mjs")}`,
    );
  });
  afterAll(() => gaggle?.stop());

  it("shows each principal its own clients, background processes and calls, and the shared children to both", async () => {
    const a = await gaggle.connect({ headers: alice, name: "alice-client" });
    const b = await gaggle.connect({ headers: bob, name: "bob-client" });
    await a.callTool({ name: "execute_child_tool", arguments: { server_id: "echo", tool_name: "echo", arguments: { text: "from alice" } } });
    const run = await a.callTool({
      name: "execute_child_tool",
      arguments: { server_id: "process", tool_name: "gg_process_run", arguments: { command: "sleep 30" } },
    });
    const pid = String((JSON.parse(textOf(run as never)) as { pid: number }).pid);
    await b.callTool({ name: "execute_child_tool", arguments: { server_id: "echo", tool_name: "echo", arguments: { text: "from bob" } } });

    const seenByAlice = await json<Status>(`${base()}api/status`, alice);
    const seenByBob = await json<Status>(`${base()}api/status`, bob);
    expect(seenByAlice.gaggle.viewer).toBe("alice");
    expect(seenByAlice.clients.map((client) => client.principal)).toEqual(["alice"]);
    expect(seenByBob.clients.map((client) => client.principal)).toEqual(["bob"]);
    expect(seenByAlice.background).toEqual([expect.objectContaining({ kind: "process", id: pid, owner: "alice", title: "sleep 30" })]);
    expect(seenByBob.background).toEqual([]);
    expect(new Set(seenByAlice.recent_calls.map((call) => call.principal))).toEqual(new Set(["alice"]));
    expect(new Set(seenByBob.recent_calls.map((call) => call.principal))).toEqual(new Set(["bob"]));
    // The children are everyone's: both see the two calls, and the built-in child's, which it answered itself.
    expect(seenByBob.children.find((child) => child.server_id === "echo")?.calls).toBe(2);
    expect(seenByBob.children.find((child) => child.server_id === "process")).toMatchObject({ calls: 1, errors: 0, p50_ms: expect.any(Number) });
    await a.callTool({
      name: "execute_child_tool",
      arguments: { server_id: "process", tool_name: "gg_process_kill", arguments: { pid: Number(pid) } },
    });
  });

  it("shows a child's latest failure to both, and what it says, which may quote the arguments, only to the caller", async () => {
    const a = await gaggle.connect({ headers: alice, name: "alice-failing" });
    // The arguments do not fit the tool's schema: the error quotes the value given.
    await a.callTool({ name: "execute_child_tool", arguments: { server_id: "echo", tool_name: "add", arguments: { a: "alice-secret-7d2f", b: 1 } } });
    const lastError = async (who: Record<string, string>) =>
      (
        await json<{ children: Array<{ server_id: string; last_error: { type: string; message: string | null } | null }> }>(
          `${base()}api/status`,
          who,
        )
      ).children.find((child) => child.server_id === "echo")!.last_error;
    expect(await lastError(alice)).toMatchObject({ type: "INVALID_ARGS", message: expect.stringContaining("alice-secret-7d2f") });
    expect(await lastError(bob)).toMatchObject({ type: "INVALID_ARGS", message: null });
    const event = await firstEvent(`${base()}api/events`, bob);
    expect(event).toContain("INVALID_ARGS");
    expect(event).not.toContain("alice-secret-7d2f");
    await a.close();
  });

  it("labels the calls of an HTTP session with the MCP version its initialize agreed", async () => {
    const client = await gaggle.connect({ headers: alice, name: "versioned" });
    await client.callTool({ name: "execute_child_tool", arguments: { server_id: "echo", tool_name: "echo", arguments: { text: "versioned" } } });
    const text = (await get(`${base()}metrics`, alice)).body;
    expect(text).toMatch(
      /^mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",[^}]*mcp_protocol_version="2025-11-25",network_transport="tcp"\} \d+$/m,
    );
    await client.close();
  });

  it("times each client session that ends: mcp.server.session.duration", async () => {
    const sessions = async () => {
      const text = (await get(`${base()}metrics`, alice)).body;
      return Number(/^mcp_server_session_duration_seconds_count\{network_transport="tcp"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    const before = await sessions();
    const client = await gaggle.connect({ headers: alice, name: "short-lived" });
    // The client ends its session (DELETE /mcp), as a client that is done does.
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    await client.close();
    expect(await until(sessions, (count) => count === before + 1)).toBe(before + 1);
  });

  it("records a call whose client's session ended as cancelled, not as the child's error, and still tells the child", async () => {
    const watcher = await gaggle.connect({ headers: alice, name: "watcher" });
    const protoStatus = async () => (await json<Status>(`${base()}api/status`, alice)).children.find((child) => child.server_id === "proto")!;
    const protoStderr = async () =>
      (JSON.parse(textOf((await watcher.callTool({ name: "get_child_status", arguments: { server_id: "proto" } })) as never)) as { stderr: string[] })
        .stderr;
    const leaving = await gaggle.connect({ headers: alice, name: "leaving" });
    // The session's end answers nothing: the call is left to the client's transport.
    void leaving
      .callTool({ name: "execute_child_tool", arguments: { server_id: "proto", tool_name: "slow_cancel", arguments: { ms: 30_000 } } })
      .catch(() => undefined);
    await until(protoStatus, (proto) => (proto as unknown as { queue_depth: number }).queue_depth === 1);
    await httpTransportOf(leaving).terminateSession();
    const status = await until(
      () => json<Status>(`${base()}api/status`, alice),
      (now) => now.recent_calls.some((recent) => recent.client === "leaving/0.0.0"),
    );
    expect(status.recent_calls.find((recent) => recent.client === "leaving/0.0.0")).toMatchObject({
      target: "execute_child_tool",
      child: "proto",
      outcome: "cancelled",
      error: null,
    });
    expect(status.children.find((child) => child.server_id === "proto")).toMatchObject({ calls: 1, errors: 0, last_error: null });
    const metrics = (await get(`${base()}metrics`, alice)).body;
    expect(metrics).toMatch(/mcp_client_operation_duration_seconds_count\{[^}]*gen_ai_tool_name="slow_cancel"[^}]*error_type="CANCELLED"[^}]*\} 1/);
    expect(metrics).toMatch(/mcp_server_operation_duration_seconds_count\{[^}]*gaggle_child="proto"[^}]*error_type="CANCELLED"[^}]*\} 1/);
    expect(metrics).not.toMatch(/gaggle_child="proto"[^}]*error_type="(?!CANCELLED)/);
    const audited = await until(
      () => auditLines().filter((line) => line.tool === "slow_cancel"),
      (lines) => lines.length === 1,
    );
    expect(audited[0]).toMatchObject({ principal: "alice", client: "leaving/0.0.0", outcome: "cancelled", error: null });
    // The child is told, as when the client cancels, and why.
    expect(await until(protoStderr, (lines) => lines.some((line) => line.includes("cancelled slow_cancel")))).toEqual(
      expect.arrayContaining(["notification notifications/cancelled", "cancel reason: the client's session ended"]),
    );
    await watcher.close();
  });

  it("refuses the status, its events and the metrics without a token, and answers the page and health without one", async () => {
    for (const path of ["api/status", "api/events", "metrics"]) {
      const missing = await get(`${base()}${path}`);
      expect(missing.status, path).toBe(401);
      expect(missing.headers["www-authenticate"]).toBe('Bearer realm="gaggle"');
      const wrong = await get(`${base()}${path}`, { authorization: "Bearer wrong" });
      expect(wrong.status, path).toBe(401);
      expect(wrong.headers["www-authenticate"]).toBe('Bearer realm="gaggle", error="invalid_token"');
    }
    expect((await get(`${base()}metrics`, bob)).status).toBe(200);
    expect((await get(base())).status).toBe(200);
    expect((await get(`${base()}healthz`)).status).toBe(200);
    expect((await get(`${base()}readyz`)).status).toBe(200);
  });

  it("serves the page itself, which holds no data, under a policy that lets it load nothing from elsewhere", async () => {
    const page = await get(base());
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.headers["content-security-policy"]).toMatch(/default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(page.body).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
  });
});
