import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { startGaggle, textOf, writeConfig } from "../../helpers/gaggle.js";
import { startHttpGaggle } from "../../helpers/gaggle-http.js";
import { CLI, ROOT, fixtureChild } from "../../helpers/paths.js";
import { descendants, isAlive, isWatchdog, waitGone, watchdogsOf } from "../../helpers/processes.js";

const stubbornConfig = `[gateway]\nshutdown_grace_ms = 300\n\n${fixtureChild("stubborn", "stubborn.mjs")}\n${fixtureChild("echo", "echo.mjs")}`;

/** Starts a gaggle whose children are up, and returns the pids it started. */
async function gaggleWithChildren() {
  const gaggle = await startGaggle(stubbornConfig);
  const pids = JSON.parse(textOf(await gaggle.meta("execute_child_tool", { server_id: "stubborn", tool_name: "pids" }))) as {
    pid: number;
    grandchild_pid: number;
  };
  await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "echo", arguments: { text: "up" } });
  const all = descendants(gaggle.pid);
  expect(all).toEqual(expect.arrayContaining([pids.pid, pids.grandchild_pid]));
  expect(all.every(isAlive)).toBe(true);
  return { gaggle, pids, all };
}

describe("no process outlives gaggle", () => {
  it("when its client closes stdin, even a child that ignores SIGTERM and its grandchild", async () => {
    const { gaggle, all } = await gaggleWithChildren();
    await gaggle.close();
    expect(await waitGone([gaggle.pid, ...all])).toEqual([]);
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`on ${signal}`, async () => {
      const { gaggle, all } = await gaggleWithChildren();
      process.kill(gaggle.pid, signal);
      expect(await waitGone([gaggle.pid, ...all])).toEqual([]);
      await gaggle.close().catch(() => {});
    });
  }

  it("on SIGINT with server-everything running: every child is signalled at once, and gaggle exits first", async () => {
    // server-everything does not exit when its stdin closes: a shutdown that waited for that would be killed by
    // the client first (Claude Code sends SIGKILL 500 ms after SIGINT). How long it takes is measured by the bench.
    const everything = `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
    const gaggle = await startGaggle(
      `[mcp_servers.everything]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(everything)}, "stdio"]\n`,
    );
    await gaggle.meta("execute_child_tool", { server_id: "everything", tool_name: "echo", arguments: { message: "up" } });
    // server-everything and the watchdog: both go.
    const all = descendants(gaggle.pid);
    expect(all.length).toBeGreaterThan(1);
    process.kill(gaggle.pid, "SIGINT");
    expect(await waitGone([gaggle.pid, ...all])).toEqual([]);
    await gaggle.close().catch(() => {});
  });

  it("on SIGTERM while a child is still starting: its start is ended, not waited out", async () => {
    // Proxy mode starts the child with gaggle; it would take a minute to answer initialize.
    const gaggle = await startHttpGaggle(`[gateway]\nexpose = "tools"\n${fixtureChild("starting", "slow.mjs", 'env = { SLOW_START_MS = "60000" }')}`);
    await expect.poll(() => descendants(gaggle.pid).length, { timeout: 10_000 }).toBeGreaterThan(0);
    const started = descendants(gaggle.pid);
    // A stop that waited for the start would outlast the test (startup_timeout_ms is 30 s).
    await gaggle.stop();
    expect(await waitGone(started)).toEqual([]);
  });

  it("when a one-shot command finishes", async () => {
    const path = writeConfig(stubbornConfig);
    const run = spawn(process.execPath, [CLI, "--config", path, "call", "stubborn", "pids"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    run.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const [code] = await once(run, "exit");
    expect(code).toBe(0);
    const pids = JSON.parse(out) as { pid: number; grandchild_pid: number };
    expect(await waitGone([pids.pid, pids.grandchild_pid])).toEqual([]);
  });
});

describe("close_child_session", () => {
  it("kills the child's whole process group, escalating to SIGKILL", async () => {
    const { gaggle, pids } = await gaggleWithChildren();
    const closed = await gaggle.metaJson<{ status: string }>("close_child_session", { server_id: "stubborn" });
    expect(closed.status).toBe("closed");
    expect(await waitGone([pids.pid, pids.grandchild_pid], 1000)).toEqual([]);
    const status = await gaggle.metaJson<{ status: string; pid: number | null }>("get_child_status", { server_id: "stubborn" });
    expect(status).toMatchObject({ status: "stopped", pid: null });
    await gaggle.close();
  });
});

describe("when gaggle cannot shut down", () => {
  it("its watchdog kills every child group after gaggle is SIGKILLed", async () => {
    const { gaggle, all } = await gaggleWithChildren();
    process.kill(gaggle.pid, "SIGKILL");
    expect(await waitGone([gaggle.pid, ...all.filter((pid) => !isWatchdog(pid))])).toEqual([]);
    await gaggle.close().catch(() => {});
  });

  it("a watchdog killed just before gaggle is SIGKILLed leaves another that kills every child group", async () => {
    const { gaggle, all } = await gaggleWithChildren();
    const [first] = watchdogsOf(gaggle.pid);
    expect(first).toBeDefined();
    // Both at once: gaggle has no time to start a new watchdog in between.
    process.kill(first!, "SIGKILL");
    process.kill(gaggle.pid, "SIGKILL");
    expect(await waitGone([gaggle.pid, ...all.filter((pid) => !isWatchdog(pid))])).toEqual([]);
    await gaggle.close().catch(() => {});
  });

  it("a child whose leader dies takes its descendants with it", async () => {
    const { gaggle, pids } = await gaggleWithChildren();
    process.kill(pids.pid, "SIGKILL");
    expect(await waitGone([pids.pid, pids.grandchild_pid])).toEqual([]);
    const status = await gaggle.metaJson<{ status: string }>("get_child_status", { server_id: "stubborn" });
    expect(status.status).toBe("failed");
    await gaggle.close();
  });
});
