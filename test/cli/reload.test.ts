// A running gaggle follows its config file: edits add, remove and restart children (unchanged ones keep their
// process), SIGHUP reads the file again, and an edit that does not load keeps the config in force and says why.
import { mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { failureOf, startGaggle, textOf, type RunningGaggle } from "../helpers/gaggle.js";
import { startHttpGaggle } from "../helpers/gaggle-http.js";
import { envelope } from "../helpers/modern-http.js";
import { listen } from "../helpers/notifications.js";
import { RawStdioGaggle } from "../helpers/raw-stdio.js";
import { NO_BUILT_INS, fixtureChild } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { isAlive, waitGone } from "../helpers/processes.js";

const gaggles: RunningGaggle[] = [];
const raws: RawStdioGaggle[] = [];
afterEach(async () => {
  await Promise.allSettled([...gaggles.splice(0), ...raws.splice(0)].map((gaggle) => gaggle.close()));
});

async function start(config: string, args: string[] = []): Promise<RunningGaggle> {
  const gaggle = await startGaggle(config, { args });
  gaggles.push(gaggle);
  return gaggle;
}

async function pidOf(gaggle: RunningGaggle, server: string): Promise<number> {
  return Number(textOf(await gaggle.meta("execute_child_tool", { server_id: server, tool_name: "pid", arguments: {} })));
}

async function childNames(gaggle: RunningGaggle): Promise<string[]> {
  const listed = await gaggle.metaJson<{ children: string[] }>("list_registered_children");
  return listed.children.sort();
}

const child = (name: string, extra = "") => fixtureChild(name, "echo.mjs", extra);
/** Proxy mode, whose lists wait for a child however long its start takes on a busy machine. */
const PROXY = '[gateway]\nexpose = "tools"\nlist_wait_ms = 30000\n';

describe("a config edit", () => {
  it("adds, removes and restarts children, and leaves the unchanged ones running in the same process", async () => {
    const before = [NO_BUILT_INS, child("kept"), child("changed", 'env = { MARK = "one" }'), child("dropped")].join("\n");
    const gaggle = await start(before);
    const kept = await pidOf(gaggle, "kept");
    const changed = await pidOf(gaggle, "changed");
    const dropped = await pidOf(gaggle, "dropped");
    let toolChanges = 0;
    gaggle.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void toolChanges++);

    writeFileSync(gaggle.configPath, [NO_BUILT_INS, child("kept"), child("changed", 'env = { MARK = "two" }'), child("added")].join("\n"));
    await until(
      () => childNames(gaggle),
      (names) => names.includes("added"),
    );
    expect(await childNames(gaggle)).toEqual(["added", "changed", "kept"]);
    expect(await pidOf(gaggle, "kept")).toBe(kept);
    expect(await pidOf(gaggle, "changed")).not.toBe(changed);
    expect(textOf(await gaggle.meta("execute_child_tool", { server_id: "changed", tool_name: "env", arguments: { name: "MARK" } }))).toBe("two");
    expect(await waitGone([changed, dropped])).toEqual([]);
    expect(isAlive(kept)).toBe(true);
    expect(failureOf(await gaggle.meta("execute_child_tool", { server_id: "dropped", tool_name: "pid", arguments: {} })).code).toBe(
      "SERVER_NOT_FOUND",
    );
    expect(textOf(await gaggle.meta("execute_child_tool", { server_id: "added", tool_name: "echo", arguments: { text: "new" } }))).toBe("new");
    // One notice for the whole reload, not one per child.
    await until(
      () => toolChanges,
      (count) => count > 0,
    );
    expect(toolChanges).toBe(1);
  });

  it("tells a call in flight on a child it removes or restarts why its session ended", async () => {
    const slow = (extra = "") => fixtureChild("slow", "slow.mjs", extra);
    const gaggle = await start([NO_BUILT_INS, slow(), child("other")].join("\n"));
    const sleep = () => gaggle.meta("execute_child_tool", { server_id: "slow", tool_name: "sleep", arguments: { ms: 60_000 } });
    /** A sleep the child is running; the call in an object, so that awaiting this does not await the call. */
    const inFlight = async () => {
      const call = sleep();
      await until(
        () => gaggle.metaJson<{ queue: { running: number } }>("get_child_status", { server_id: "slow" }),
        (status) => status.queue.running === 1,
      );
      return { call };
    };

    const restarted = (await inFlight()).call;
    writeFileSync(gaggle.configPath, [NO_BUILT_INS, slow('env = { MARK = "two" }'), child("other")].join("\n"));
    expect(failureOf(await restarted)).toMatchObject({
      code: "SESSION_ERROR",
      error: 'slow was started again with its edited config while tool "sleep" was in flight',
      hint: "call again: the next call reaches it as the config now sets it",
    });

    const removed = (await inFlight()).call;
    writeFileSync(gaggle.configPath, [NO_BUILT_INS, child("other")].join("\n"));
    expect(failureOf(await removed)).toMatchObject({
      code: "SESSION_ERROR",
      error: 'slow was removed from the config while tool "sleep" was in flight',
      hint: "add mcp_servers.slow to the config again to call it",
    });
  });

  it("tells a call in flight on a child closed by close_child_session why its session ended", async () => {
    const gaggle = await start([NO_BUILT_INS, fixtureChild("slow", "slow.mjs")].join("\n"));
    const call = gaggle.meta("execute_child_tool", { server_id: "slow", tool_name: "sleep", arguments: { ms: 60_000 } });
    await until(
      () => gaggle.metaJson<{ queue: { running: number } }>("get_child_status", { server_id: "slow" }),
      (status) => status.queue.running === 1,
    );
    await gaggle.meta("close_child_session", { server_id: "slow" });
    expect(failureOf(await call)).toMatchObject({
      code: "SESSION_ERROR",
      error: 'slow\'s session was closed by close_child_session while tool "sleep" was in flight',
      hint: "call again: the next call starts a new session",
    });
  });

  it("that does not load keeps the running config, tells the client why, and is applied once fixed", async () => {
    const gaggle = await start([NO_BUILT_INS, child("first")].join("\n"));
    const heard = listen(gaggle.client);
    const first = await pidOf(gaggle, "first");

    writeFileSync(gaggle.configPath, [NO_BUILT_INS, child("first"), "[mcp_servers.broken]\ncommand = 7\n"].join("\n"));
    const told = await until(
      () => heard.logs,
      (logs) => logs.some((log) => log.level === "error"),
    );
    const error = told.find((log) => log.level === "error")!;
    expect(error.logger).toBe("gaggle");
    expect(String(error.data)).toMatch(/does not load, so gaggle keeps the one it runs/);
    expect(String(error.data)).toMatch(/mcp_servers\.broken\.command/);
    expect(await childNames(gaggle)).toEqual(["first"]);
    expect(await pidOf(gaggle, "first")).toBe(first);

    writeFileSync(gaggle.configPath, [NO_BUILT_INS, child("first"), child("second")].join("\n"));
    await until(
      () => childNames(gaggle),
      (names) => names.includes("second"),
    );
    expect(await pidOf(gaggle, "first")).toBe(first);
  });

  it("that does not load, once fixed, tells the clients it loads again", async () => {
    const gaggle = await startHttpGaggle([NO_BUILT_INS, child("first")].join("\n"));
    try {
      const client = await gaggle.connect();
      const heard = listen(client);
      writeFileSync(gaggle.config, [NO_BUILT_INS, child("first"), "[mcp_servers.broken]\ncommand = 7\n"].join("\n"));
      await until(
        () => heard.logs,
        (logs) => logs.some((log) => log.level === "error"),
      );
      writeFileSync(gaggle.config, [NO_BUILT_INS, child("first"), child("second")].join("\n"));
      const told = await until(
        () => heard.logs,
        (logs) => logs.some((log) => log.level === "info"),
      );
      const fixed = told.find((log) => log.level === "info")!;
      expect(fixed.logger).toBe("gaggle");
      expect(String(fixed.data)).toMatch(/config file loads again/);
    } finally {
      await gaggle.stop();
    }
  });

  it("names the settings that take effect only when gaggle starts again", async () => {
    const gaggle = await start([NO_BUILT_INS, child("first")].join("\n"));
    const heard = listen(gaggle.client);
    writeFileSync(gaggle.configPath, ["[gateway]\nshutdown_grace_ms = 500\n", NO_BUILT_INS, child("first")].join("\n"));
    const told = await until(
      () => heard.logs,
      (logs) => logs.some((log) => log.level === "warning"),
    );
    expect(String(told.find((log) => log.level === "warning")!.data)).toMatch(
      /gateway\.shutdown_grace_ms changed and takes effect only when gaggle starts again \(reconnect the client, which starts gaggle again\)/,
    );
  });

  it("says how to start a gaggle serving HTTP again for the settings it cannot follow", async () => {
    const gaggle = await startHttpGaggle([NO_BUILT_INS, child("first")].join("\n"));
    try {
      const heard = listen(await gaggle.connect());
      writeFileSync(gaggle.config, ["[gateway]\nmax_sessions = 50\n", NO_BUILT_INS, child("first")].join("\n"));
      const told = await until(
        () => heard.logs,
        (logs) => logs.some((log) => log.level === "warning"),
      );
      expect(String(told.find((log) => log.level === "warning")!.data)).toMatch(
        /gateway\.max_sessions changed and takes effect only when gaggle starts again \(stop this gaggle --http and run it again\)/,
      );
    } finally {
      await gaggle.stop();
    }
  });

  it("names the admin listen address, the state dir and gateway.shared, each of them", async () => {
    const gaggle = await start([NO_BUILT_INS, child("first")].join("\n"));
    const heard = listen(gaggle.client);
    const stateDir = mkdtempSync(join(tmpdir(), "reload-state-"));
    const gateway = `[gateway]\nadmin = "127.0.0.1:0"\nstate_dir = ${JSON.stringify(stateDir)}\nshared = false\n`;
    writeFileSync(gaggle.configPath, [gateway, NO_BUILT_INS, child("first")].join("\n"));
    const told = await until(
      () => heard.logs,
      (logs) => logs.some((log) => log.level === "warning"),
    );
    const warning = String(told.find((log) => log.level === "warning")!.data);
    for (const key of ["gateway.admin", "gateway.state_dir", "gateway.shared"]) expect(warning).toContain(key);
  });
});

describe("a reload of how proxy mode lists", () => {
  /** A child that answers only after its start: longer than a list waiting 0 ms, far shorter than one waiting 120 s. */
  const late = fixtureChild("late", "slow.mjs", 'env = { SLOW_START_MS = "4000" }');
  const warned = async (heard: ReturnType<typeof listen>) =>
    String(
      (
        await until(
          () => heard.logs,
          (logs) => logs.some((log) => log.level === "warning"),
        )
      ).find((log) => log.level === "warning")!.data,
    );

  it("follows an edited list_wait_ms at once: the first tools/list after it waits for a child still starting", async () => {
    const gaggle = await start(['[gateway]\nexpose = "tools"\nlist_wait_ms = 0\n', NO_BUILT_INS, child("a")].join("\n"));
    const heard = listen(gaggle.client);
    // A restart-only key edited with it, so that the reload always warns, and the warning can be read for what it leaves out.
    const edited = '[gateway]\nexpose = "tools"\nlist_wait_ms = 120000\nshutdown_grace_ms = 500\n';
    writeFileSync(gaggle.configPath, [edited, NO_BUILT_INS, child("a"), late].join("\n"));
    const warning = await warned(heard);
    expect(warning).toContain("gateway.shutdown_grace_ms");
    expect(warning).not.toContain("list_wait_ms");
    // The edit started `late`; a list waiting the old 0 ms would leave it out.
    const names = (await gaggle.client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain("late__echo");
    expect(names).toContain("a__echo");
  });

  it("keeps gateway.expose as it runs until a restart, as the warning says", async () => {
    const gaggle = await start([PROXY, NO_BUILT_INS, child("a")].join("\n"));
    const heard = listen(gaggle.client);
    writeFileSync(gaggle.configPath, ['[gateway]\nexpose = "meta"\nlist_wait_ms = 30000\n', NO_BUILT_INS, child("a"), child("b")].join("\n"));
    expect(await warned(heard)).toMatch(/gateway\.expose changed and takes effect only when gaggle starts again/);
    // Proxy mode still: the added child's tools are listed under exposed names, and the meta-tools are not.
    const names = (await gaggle.client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["a__echo", "b__echo"]));
    expect(names).not.toContain("list_registered_children");
  });
});

describe("a reload that changes what is offered", () => {
  it("lists the meta-tools once a child is offered through them, with one list_changed, and hints speak of them", async () => {
    const gaggle = await start([PROXY, NO_BUILT_INS, child("a")].join("\n"));
    expect(gaggle.client.getInstructions()).toMatch(/tools\/list lists their tools/);
    const first = (await gaggle.client.listTools()).tools.map((tool) => tool.name);
    expect(first).toContain("a__echo");
    expect(first).not.toContain("list_registered_children");
    let toolChanges = 0;
    gaggle.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void toolChanges++);

    writeFileSync(gaggle.configPath, [PROXY, NO_BUILT_INS, child("a"), child("b", 'expose = "meta"')].join("\n"));
    const names = await until(
      async () => (await gaggle.client.listTools()).tools.map((tool) => tool.name),
      (listed) => listed.includes("list_registered_children"),
    );
    expect(names).toContain("a__echo");
    expect(names.some((name) => name.startsWith("b__"))).toBe(false);
    await until(
      () => toolChanges,
      (count) => count > 0,
    );
    expect(toolChanges).toBe(1);
    // The hints of a meta-tool's failure name the meta-tools now listed, not tools/list.
    const invalid = failureOf(await gaggle.meta("execute_child_tool", { server_id: "a", tool_name: "echo", arguments: {} }));
    expect(invalid.code).toBe("INVALID_ARGS");
    expect(invalid.hint).toMatch(/get_schema\("a", "echo"\)/);
  });

  it("offers a built-in child's tools when its expose changes, with one list_changed, keeping the child and its work", async () => {
    const withProcess = (expose: string) =>
      ["[virtual.goose]\nenabled = false\n", "[virtual.team]\nenabled = false\n", `[virtual.process]\nenabled = true\n${expose}`, child("a")].join(
        "\n",
      );
    const gaggle = await start(withProcess(""));
    const heard = listen(gaggle.client);
    expect((await gaggle.client.listTools()).tools.map((tool) => tool.name)).not.toContain("gg_process_run");
    const processTool = (tool: string, args: Record<string, unknown>) =>
      gaggle.meta("execute_child_tool", { server_id: "process", tool_name: tool, arguments: args });
    const { pid } = JSON.parse(textOf(await processTool("gg_process_run", { command: "sleep 300" }))) as { pid: number };
    let toolChanges = 0;
    gaggle.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void toolChanges++);

    writeFileSync(gaggle.configPath, withProcess("expose = true\n"));
    await until(
      () => toolChanges,
      (count) => count > 0,
    );
    expect((await gaggle.client.listTools()).tools.map((tool) => tool.name)).toContain("gg_process_run");
    expect(toolChanges).toBe(1);
    expect(heard.logs.filter((log) => log.level === "warning")).toEqual([]);
    // Only how it is listed changed: the same child still runs the command it started.
    expect(JSON.parse(textOf(await processTool("gg_process_status", { pid })))).toMatchObject({ status: "running" });
    await processTool("gg_process_kill", { pid });
    expect(await waitGone([pid])).toEqual([]);
  });

  it("tells a 2026-07-28 client the instructions of the running config in server/discover", async () => {
    const gaggle = new RawStdioGaggle([PROXY, NO_BUILT_INS, child("a")].join("\n"));
    raws.push(gaggle);
    const discover = async (id: string) => {
      gaggle.send({ id, method: "server/discover", params: { _meta: envelope() } });
      return ((await gaggle.answerTo(id)).result as { instructions: string }).instructions;
    };
    expect(await discover("d1")).toMatch(/tools\/list lists their tools/);
    writeFileSync(gaggle.configPath, [PROXY, NO_BUILT_INS, child("a"), child("b", 'expose = "meta"')].join("\n"));
    let round = 0;
    expect(
      await until(
        () => discover(`d${++round + 1}`),
        (instructions) => !/tools\/list lists their tools/.test(instructions),
      ),
    ).toMatch(/list_registered_children names the children/);
  });
});

describe("a config that does not load at start", () => {
  it("still connects, says why in the instructions, the meta-tools and a log message, and is applied once fixed", async () => {
    const client = new Client({ name: "reload-test", version: "0.0.0" }, { capabilities: {} });
    const heard = listen(client);
    const gaggle = await startGaggle([NO_BUILT_INS, "[mcp_servers.broken]\ncommand = 7\n"].join("\n"), { client });
    gaggles.push(gaggle);
    expect(client.getInstructions()).toMatch(/config file does not load[\s\S]*mcp_servers\.broken\.command/);
    const listed = await gaggle.metaJson<{ children: string[]; config_errors: string[] }>("list_registered_children");
    expect(listed.children).not.toContain("broken");
    expect(listed.config_errors.join("\n")).toMatch(/mcp_servers\.broken\.command/);
    const missing = failureOf(await gaggle.meta("get_child_status", { server_id: "broken" }));
    expect(missing.error).toMatch(/config file does not load, so its children are not served: .*mcp_servers\.broken\.command/);
    await until(
      () => heard.logs,
      (logs) => logs.some((log) => log.level === "error" && /does not load/.test(String(log.data))),
    );

    writeFileSync(gaggle.configPath, [NO_BUILT_INS, child("fixed")].join("\n"));
    await until(
      () => childNames(gaggle),
      (names) => names.includes("fixed"),
    );
    expect((await gaggle.metaJson("list_registered_children")).config_errors).toBeUndefined();
    expect(await pidOf(gaggle, "fixed")).toBeGreaterThan(0);
  });
});

describe("a config that does not load at start, to a 2026-07-28 client", () => {
  it("says why in server/discover's instructions, with a log message, and in the meta-tools' answers", async () => {
    const gaggle = new RawStdioGaggle([NO_BUILT_INS, "[mcp_servers.broken]\ncommand = 7\n"].join("\n"));
    raws.push(gaggle);
    gaggle.send({ id: "d", method: "server/discover", params: { _meta: envelope({ "io.modelcontextprotocol/logLevel": "error" }) } });
    const discovered = (await gaggle.answerTo("d")).result as { instructions: string };
    expect(discovered.instructions).toMatch(/config file does not load[\s\S]*mcp_servers\.broken\.command/);
    const logged = gaggle.messages.find((message) => message.method === "notifications/message");
    expect(logged?.params).toMatchObject({ level: "error", logger: "gaggle" });
    expect(String((logged?.params as { data: unknown }).data)).toMatch(/does not load[\s\S]*mcp_servers\.broken\.command/);

    const call = (id: string, name: string, args: Record<string, unknown>) =>
      gaggle.send({ id, method: "tools/call", params: { name, arguments: args, _meta: envelope() } });
    call("l", "list_registered_children", {});
    const listed = JSON.parse(textOf((await gaggle.answerTo("l")).result as CallToolResult)) as { config_errors: string[] };
    expect(listed.config_errors.join("\n")).toMatch(/mcp_servers\.broken\.command/);
    call("s", "get_child_status", { server_id: "broken" });
    expect(textOf((await gaggle.answerTo("s")).result as CallToolResult)).toMatch(/config file does not load, so its children are not served/);
  });
});

describe("a config that does not load at start and holds a command policy", () => {
  it("serves no built-in child until it loads, so no command runs unconfined; once fixed, the policy applies", async () => {
    const policy = '[virtual.process.policy]\nallow = ["echo *"]\n';
    const gaggle = await start(['[virtual.process]\ncwd = "/tmp"\n', policy].join("\n"));
    expect((await gaggle.metaJson<{ children: string[] }>("list_registered_children")).children).toEqual([]);
    const run = () => gaggle.meta("execute_child_tool", { server_id: "process", tool_name: "gg_process_run", arguments: { command: "id" } });
    expect(failureOf(await run())).toMatchObject({ code: "SERVER_NOT_FOUND" });

    writeFileSync(gaggle.configPath, policy);
    await until(
      () => childNames(gaggle),
      (names) => names.includes("process"),
    );
    expect(failureOf(await run())).toMatchObject({ code: "PERMISSION_DENIED" });

    // An edit of the policy remakes the process child with it.
    writeFileSync(gaggle.configPath, '[virtual.process.policy]\nallow = ["echo *", "id"]\n');
    await until(
      () => run(),
      (answer) => !answer.isError,
    );
  });
});

describe("SIGHUP", () => {
  it("reads the config again: an edit the file watch cannot see (behind a symlink) is applied, and gaggle keeps serving", async () => {
    const real = join(mkdtempSync(join(tmpdir(), "reload-real-")), "children_config.toml");
    writeFileSync(real, [NO_BUILT_INS, child("first")].join("\n"));
    const link = join(mkdtempSync(join(tmpdir(), "reload-link-")), "children_config.toml");
    symlinkSync(real, link);
    const gaggle = await start("", ["--config", link]);
    expect(await childNames(gaggle)).toEqual(["first"]);

    writeFileSync(real, [NO_BUILT_INS, child("first"), child("second")].join("\n"));
    process.kill(gaggle.pid, "SIGHUP");
    await until(
      () => childNames(gaggle),
      (names) => names.includes("second"),
    );
    expect(isAlive(gaggle.pid)).toBe(true);
  });
});

describe("list_changed", () => {
  it("reaches the client once for a burst of changes from a child", async () => {
    const gaggle = await start(['[gateway]\nexpose = "both"\n', NO_BUILT_INS, child("echo")].join("\n"));
    let toolChanges = 0;
    gaggle.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void toolChanges++);
    await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "add_tool", arguments: { name: "burst", count: 6 } });
    await until(
      () => toolChanges,
      (count) => count > 0,
    );
    // A later change makes a notice of its own: the count then says how many the burst made.
    await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "add_tool", arguments: { name: "later" } });
    await until(
      () => toolChanges,
      (count) => count > 1,
    );
    expect(toolChanges).toBe(2);
  });
});
