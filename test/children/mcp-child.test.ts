// McpChild on its own, with real fixture processes: one start shared by concurrent calls, close during a start, and the state walk.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { textOf } from "../helpers/gaggle.js";
import { callOf, closeMadeChildren, mcpChildOf, refusal, settle } from "../helpers/mcp-child.js";
import { until } from "../helpers/poll.js";
import { descendants, isAlive, waitGone } from "../helpers/processes.js";
import { Cancellation, ClientGone } from "../../src/children/calls/cancellation.js";

afterEach(closeMadeChildren);

describe("starting", () => {
  it("shares one start between concurrent first calls", async () => {
    const { child } = mcpChildOf("slow.mjs", 'env = { SLOW_START_MS = "300" }');
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => callOf(child, "echo", { text: `n${i}` })));
    expect(results.map(textOf)).toEqual(["n0", "n1", "n2", "n3", "n4"]);
    expect(child.status().restarts).toBe(0);
    expect(child.status().stderrTail.filter((line) => line === "slow fixture ready")).toHaveLength(1);
  });
});

/**
 * This test process's descendants but the reaper watchdog, which the first process group gaggle starts
 * brings up and which stays for the life of the process.
 */
function childProcesses(): number[] {
  return descendants(process.pid).filter((pid) => {
    try {
      return !readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("gaggle-reaper");
    } catch {
      return false;
    }
  });
}

describe("starting, when the child dies", () => {
  it("fails a start whose child dies while its session state is restored, instead of serving a dead session", async () => {
    const { child, switchboard } = mcpChildOf("exit-on-set-level.mjs");
    // A client's level, which every new session of a child that logs is given before it serves.
    expect(await switchboard.setLogLevel("debug")).toEqual([]);
    const first = await callOf(child, "echo", { text: "x" }).then(
      () => expect.unreachable("the call was answered by a child that died"),
      (error: unknown) => error,
    );
    expect(first).toMatchObject({ code: "SERVER_FAILED", message: expect.stringContaining("subject failed to start: exited (code 4)") });
    expect(child.status()).toMatchObject({ state: "failed", pid: null, lastError: "failed to start: exited (code 4)" });
    expect(child.status().stderrTail).toContain("exit-on-set-level fixture: exiting on logging/setLevel");
  });
});

describe("closing", () => {
  it("ends a start under way at once, its process with it; the next call starts anew", async () => {
    const { child } = mcpChildOf("slow.mjs", 'env = { SLOW_START_MS = "500" }');
    const before = new Set(childProcesses());
    // Whether this call is answered depends on whether its request reaches the child before the close does.
    const first = callOf(child, "echo", { text: "x" }).catch(() => undefined);
    await settle();
    expect(child.status().state).toBe("starting");
    const started = await until(
      () => childProcesses().filter((pid) => !before.has(pid)),
      (pids) => pids.length > 0,
    );
    expect(child.status().state).toBe("starting");
    // The start is ended rather than waited for: the session never ran, so it has no uptime.
    expect(await child.close()).toEqual({ uptimeMs: null });
    expect(child.status()).toMatchObject({ state: "stopped", pid: null });
    expect(await waitGone(started)).toEqual([]);
    await first;

    expect(textOf(await callOf(child, "echo", { text: "again" }))).toBe("again");
    const { state, pid } = child.status();
    expect(state).toBe("running");
    expect(started).not.toContain(pid);
    expect(isAlive(pid!)).toBe(true);
  });
});

describe("states", () => {
  it("walks not_started, starting, running, stopping, stopped, starting, running, failed (killed), starting, running", async () => {
    const { child } = mcpChildOf("echo.mjs");
    const seen: string[] = [child.status().state];
    const note = () => seen.push(child.status().state);

    let call = callOf(child, "echo", { text: "1" });
    await settle();
    note();
    await call;
    note();
    const closing = child.close();
    await settle();
    note();
    await closing;
    note();

    call = callOf(child, "echo", { text: "2" });
    await settle();
    note();
    await call;
    note();
    process.kill(child.status().pid!, "SIGKILL");
    await until(
      () => child.status().state,
      (state) => state !== "running",
    );
    note();
    expect(child.status().lastError).toBe("exited (signal SIGKILL) unexpectedly");

    // A child that ended by itself is started again by the next call at once: a crash is not a failed start.
    call = callOf(child, "echo", { text: "3" });
    await settle();
    note();
    expect(textOf(await call)).toBe("3");
    note();
    expect(seen).toEqual(["not_started", "starting", "running", "stopping", "stopped", "starting", "running", "failed", "starting", "running"]);
    expect(child.status().restarts).toBe(2);
  });
});

describe("failures that are not the child's", () => {
  it("fails a request its client cancelled as CANCELLED, telling the child why, and counts nothing against the child", async () => {
    const { child } = mcpChildOf("protocol.mjs");
    const cancel = new Cancellation();
    const read = refusal(child.readResource("fixture://slow/30000", { cancel }));
    await until(
      () => child.status().stderrTail,
      (lines) => lines.includes("request resources/read"),
    );
    cancel.abort(new ClientGone("the client's session ended"));
    expect(await read).toMatchObject({ code: "CANCELLED", message: expect.stringContaining("was cancelled: the client's session ended") });
    const tail = await until(
      () => child.status().stderrTail,
      (lines) => lines.includes("cancelled slow_read"),
    );
    expect(tail).toContain("cancel reason: the client's session ended");
    expect(child.status()).toMatchObject({ state: "running", restarts: 0, lastError: null });
  });

  it("takes a child's own error answer of code -32000 for its answer, not for its connection closing", async () => {
    const { child } = mcpChildOf("protocol.mjs");
    const failure = await refusal(child.readResource("fixture://fails/-32000", {}));
    expect(failure).toMatchObject({
      code: "SESSION_ERROR",
      message: expect.stringContaining("answered resources/read of fixture://fails/-32000 with error -32000"),
    });
    expect(failure.hint ?? "").not.toContain("restarts");
    expect(child.status()).toMatchObject({ state: "running", restarts: 0, lastError: null });
  });
});
