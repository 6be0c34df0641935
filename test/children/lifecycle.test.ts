import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, startGaggle, textOf, type RunningGaggle } from "../helpers/gaggle.js";
import { fixtureChild, ROOT } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { isAlive, waitGone } from "../helpers/processes.js";

interface Status {
  status: string;
  pid: number | null;
  restarts: number;
  error: string | null;
  stderr: string[];
  stdout_noise: { lines: number; recent: { reason: string; line: string }[] };
  calls_served: number;
  queue_depth: number;
  startup_time: string | null;
}

let gaggle: RunningGaggle;

/** A file that can be read but not run, whatever the checkout's file modes. */
const notExecutable = join(mkdtempSync(join(tmpdir(), "gaggle-noexec-")), "server.mjs");
writeFileSync(notExecutable, "", { mode: 0o644 });

const config = [
  fixtureChild("lazy", "echo.mjs"),
  fixtureChild("shared_start", "slow.mjs", 'env = { SLOW_START_MS = "300" }'),
  fixtureChild("crashy", "crash.mjs"),
  fixtureChild("broken", "exit-at-start.mjs"),
  fixtureChild("garbage", "garbage-stdout.mjs"),
  fixtureChild("timeouts", "echo.mjs", "timeout_ms = 1000\nmax_timeout_ms = 1500\nconcurrency = 4"),
  fixtureChild("stuck", "slow.mjs", "timeout_ms = 2000"),
  fixtureChild("held", "echo.mjs", "timeout_ms = 1000"),
  fixtureChild("serial", "slow.mjs"),
  fixtureChild("parallel", "slow.mjs", "concurrency = 3"),
  fixtureChild("queued", "slow.mjs"),
  fixtureChild("closable", "echo.mjs"),
  fixtureChild("idle", "echo.mjs", "idle_timeout_ms = 300"),
  fixtureChild("eager", "echo.mjs", 'startup = "eager"'),
  // Long enough for the fixture to boot and say why it waits on a loaded machine; it never gets to serve.
  fixtureChild("slow_start", "slow.mjs", 'env = { SLOW_START_MS = "60000" }\nstartup_timeout_ms = 3000'),
  `[mcp_servers.missing]\ncommand = "no-such-mcp-server"\ncwd = ${JSON.stringify(ROOT)}\n`,
  `[mcp_servers.not_executable]\ncommand = ${JSON.stringify(notExecutable)}\n`,
].join("\n");

beforeAll(async () => {
  gaggle = await startGaggle(config);
});
afterAll(async () => {
  await gaggle.close();
});

/** A file not yet there: a call of the slow fixture's wait_for on it runs until the test writes it. */
const gate = () => join(mkdtempSync(join(tmpdir(), "gaggle-gate-")), "gate");

const call = (server: string, tool: string, args: Record<string, unknown> = {}) =>
  gaggle.meta("execute_child_tool", { server_id: server, tool_name: tool, arguments: args });
const status = (server: string) => gaggle.metaJson<Status>("get_child_status", { server_id: server });

describe("starting", () => {
  it("says when a command cannot be run at all, and what to check", async () => {
    const missing = failureOf(await call("missing", "anything"));
    expect(missing).toMatchObject({
      code: "SERVER_FAILED",
      error: `missing failed to start: "no-such-mcp-server" was not found (ENOENT); check "command", "cwd" (${resolve(ROOT)}), or that it is on PATH`,
      hint: "check the command, args and env of missing in the config; get_child_status shows its stderr",
    });
    const denied = failureOf(await call("not_executable", "anything"));
    expect(denied.error).toBe(`not_executable failed to start: "${notExecutable}" is not executable (EACCES); make it executable (chmod +x)`);
    expect(await status("missing")).toMatchObject({ status: "failed", pid: null });
  });

  it("starts a child on first use, not before", async () => {
    const before = await status("lazy");
    expect(before).toMatchObject({ status: "not_started", pid: null, startup_time: null, calls_served: 0 });
    expect(textOf(await call("lazy", "echo", { text: "wake" }))).toBe("wake");
    const after = await status("lazy");
    expect(after).toMatchObject({ status: "running", restarts: 0, calls_served: 1 });
    expect(isAlive(after.pid!)).toBe(true);
  });

  it("shares one start between concurrent first calls", async () => {
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => call("shared_start", "echo", { text: `n${i}` })));
    expect(results.map(textOf)).toEqual(["n0", "n1", "n2", "n3", "n4"]);
    const after = await status("shared_start");
    expect(after.restarts).toBe(0);
    expect(after.stderr.filter((line) => line === "slow fixture ready")).toHaveLength(1);
  });

  it("starts eager children without waiting for a call", async () => {
    const eager = await until(
      () => status("eager"),
      (s) => s.status === "running",
    );
    expect(eager.status).toBe("running");
    expect(eager.calls_served).toBe(0);
  });

  it("fails a start that outlasts startup_timeout_ms and leaves no process behind", async () => {
    const body = failureOf(await call("slow_start", "echo", { text: "x" }));
    expect(body.code).toBe("SERVER_FAILED");
    expect(body.error).toContain("did not answer initialize within 3000ms (startup_timeout_ms)");
    // Still starting, and saying so on stderr: the advice is about time, not about the command.
    expect(body.error).toContain("slow fixture: waiting 60000 ms before serving");
    expect(body.hint).toBe(
      "it was still starting when startup_timeout_ms (3000 ms) ran out: raise mcp_servers.slow_start.startup_timeout_ms; get_child_status shows its stderr",
    );
    expect((await status("slow_start")).status).toBe("failed");
  });
});

describe("failures", () => {
  it("fails a call in flight at once when its child dies, with the child's stderr, and restarts on the next call", async () => {
    expect(textOf(await call("crashy", "ok"))).toBe("ok");
    const firstPid = (await status("crashy")).pid!;
    const body = failureOf(await call("crashy", "crash", { after_ms: 50 }));
    expect(body.code).toBe("SERVER_FAILED");
    expect(body.error).toContain('crashy exited (code 3) while serving tool "crash"');
    expect(body.error).toContain("crash fixture: about to die");
    expect((await status("crashy")).status).toBe("failed");
    expect(textOf(await call("crashy", "ok"))).toBe("ok");
    const after = await status("crashy");
    expect(after).toMatchObject({ status: "running", restarts: 1 });
    expect(after.pid).not.toBe(firstPid);
  });

  // The back-off itself (a new start once it has passed, the wait doubling) is proven on fake time in mcp-child-time.test.ts.
  it("reports a child that exits at start-up with its stderr, then backs off", async () => {
    const first = failureOf(await call("broken", "anything"));
    expect(first.code).toBe("SERVER_FAILED");
    expect(first.error).toContain("broken failed to start: exited (code 1)");
    expect(first.error).toContain("fatal: FIXTURE_API_KEY is not set");
    // Started twice (it ended at the era probe, so it was started again to be initialized): the error shows the
    // stderr of the run that failed, not that run's line after the first run's.
    expect(first.error.split("fatal: FIXTURE_API_KEY is not set")).toHaveLength(2);
    const second = failureOf(await call("broken", "anything"));
    expect(second.code).toBe("SERVER_FAILED");
    expect(second.error).toMatch(/failed to start 1 time\(s\) in a row; the next attempt is allowed in [01]\.\ds/);
    // The refusal says why as the failure did: a client that lists no get_child_status (search, proxy mode) has only this.
    expect(second.error).toContain("Last error: failed to start: exited (code 1); last stderr lines:\nfatal: FIXTURE_API_KEY is not set");
    expect(second.hint).toBe(
      'fix the cause the last error names; get_child_status("broken") shows why, and close_child_session("broken") starts it again at once',
    );
    const s = await status("broken");
    expect(s.status).toBe("failed");
    expect(s.error).toContain("failed to start");
    expect(s.stderr).toContain("fatal: FIXTURE_API_KEY is not set");
  });

  it("survives a child that writes non-protocol lines to stdout", async () => {
    expect(textOf(await call("garbage", "echo", { text: "ok" }))).toBe("ok");
    expect(textOf(await call("garbage", "garble"))).toBe("still alive");
    const s = await status("garbage");
    expect(s.status).toBe("running");
    // Each line it wrote is counted, and the last few kept with why they were ignored: three at start, one by garble.
    expect(s.stdout_noise.lines).toBe(4);
    expect(s.stdout_noise.recent).toContainEqual({ reason: expect.stringMatching(/^not JSON: /), line: "this is not json" });
    expect(s.stdout_noise.recent).toContainEqual({ reason: '"jsonrpc" must be "2.0", found nothing', line: '{"log":"JSON, but not JSON-RPC"}' });
    expect(s.stdout_noise.recent).toContainEqual({ reason: expect.stringMatching(/^not JSON: /), line: "garble: this is not json either" });
    // What the child wrote to stderr stays its own.
    expect(s.stderr.filter((line) => line.includes("not JSON-RPC"))).toEqual([]);
  });
});

describe("timeouts", () => {
  it("answers TIMEOUT and cancels the call at the child", async () => {
    const body = failureOf(await call("timeouts", "sleep", { ms: 5000 }));
    expect(body.code).toBe("TIMEOUT");
    expect(body.error).toContain("timed out after 1000ms");
    const s = await until(
      () => status("timeouts"),
      (value) => value.stderr.includes("cancelled sleep"),
    );
    expect(s.stderr).toContain("cancelled sleep");
  });

  it("lets progress from the child restart the timeout, up to max_timeout_ms", async () => {
    const progress: number[] = [];
    const result = await gaggle.client.callTool(
      { name: "execute_child_tool", arguments: { server_id: "timeouts", tool_name: "progress", arguments: { steps: 4, delay_ms: 250 } } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(textOf(result as never)).toBe("done 4");
    expect(progress).toEqual([1, 2, 3, 4]);
    const tooLong = failureOf(
      (await gaggle.client.callTool(
        { name: "execute_child_tool", arguments: { server_id: "timeouts", tool_name: "progress", arguments: { steps: 8, delay_ms: 250 } } },
        undefined,
        { onprogress: () => {} },
      )) as never,
    );
    expect(tooLong.code).toBe("TIMEOUT");
    expect(tooLong.error).toContain('tool "progress" on timeouts was still reporting progress after max_timeout_ms (1500ms)');
    expect(tooLong.hint).toBe("raise max_timeout_ms for timeouts in the config if the tool needs longer");
    // Past max_timeout_ms the child is told to stop, as on any other timeout.
    const s = await until(
      () => status("timeouts"),
      (value) => value.stderr.includes("cancelled progress"),
    );
    expect(s.stderr).toContain("cancelled progress");
  });
});

describe("timeouts, counted from when a call arrives", () => {
  it("fails every call to a stuck tool by about its timeout, however many wait their turn, saying how long each queued and ran", async () => {
    const sent = performance.now();
    const calls = Array.from({ length: 5 }, () =>
      call("stuck", "sleep", { ms: 60_000 }).then((result) => ({ body: failureOf(result), after: performance.now() - sent })),
    );
    const ended = await Promise.all(calls);
    // One timeout after another would end them at 2, 4, 6, 8 and 10 s.
    expect(Math.max(...ended.map(({ after }) => after))).toBeLessThan(2 * 2000);
    for (const { body } of ended) {
      expect(body.code).toBe("TIMEOUT");
      expect(body.error).toMatch(/^tool "sleep" on stuck timed out after 2000ms \(queued \d+ms, ran \d+ms\)/);
    }
  });

  it("fails a call still waiting when its time runs out, without its ever reaching the child, and lets the call ahead finish", async () => {
    // Progress keeps the call ahead going past timeout_ms (up to max_timeout_ms), holding the one slot.
    const progress: number[] = [];
    const ahead = gaggle.client.callTool(
      { name: "execute_child_tool", arguments: { server_id: "held", tool_name: "progress", arguments: { steps: 6, delay_ms: 400 } } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    await until(
      () => status("held"),
      (s) => s.stderr.includes("call progress"),
    );
    const waiting = await Promise.all([1, 2, 3].map((n) => call("held", "echo", { text: `n${n}` }).then(failureOf)));
    for (const body of waiting) {
      expect(body.code).toBe("TIMEOUT");
      expect(body.error).toMatch(
        /^tool "echo" on held timed out after 1000ms \(queued \d+ms, ran 0ms\) waiting for its turn; it never reached the child/,
      );
    }
    expect(textOf((await ahead) as never)).toBe("done 6");
    const s = await status("held");
    expect(s.stderr.filter((line) => line.startsWith("call "))).toEqual(["call progress"]);
    expect(s.calls_served).toBe(1);
  });
});

describe("queueing", () => {
  it("serialises calls to a child with concurrency 1", async () => {
    const results = await Promise.all([1, 2, 3].map(() => call("serial", "sleep", { ms: 150 })));
    expect(results.map(textOf)).toEqual(Array(3).fill("slept 150 (max in flight 1)"));
  });

  it("runs up to `concurrency` calls at once", async () => {
    const results = await Promise.all([1, 2, 3].map(() => call("parallel", "sleep", { ms: 300 })));
    expect(results.map(textOf)).toEqual(Array(3).fill("slept 300 (max in flight 3)"));
  });

  it("drops a call cancelled while it waits in the queue: the child never sees it", async () => {
    const ahead = gate();
    const running = call("queued", "wait_for", { path: ahead });
    await until(
      () => status("queued"),
      (s) => s.stderr.some((line) => line.includes("call wait_for")),
    );
    const abort = new AbortController();
    const args = { server_id: "queued", tool_name: "echo", arguments: { text: "never sent" } };
    const waiting = gaggle.client.callTool({ name: "execute_child_tool", arguments: args }, undefined, { signal: abort.signal });
    await until(
      () => status("queued"),
      (s) => s.queue_depth === 2,
    );
    abort.abort("the test gave up");
    await expect(waiting).rejects.toThrow();
    writeFileSync(ahead, "");
    expect(textOf(await running)).toBe(`found ${ahead} (max in flight 1)`);
    expect(textOf(await call("queued", "concurrent"))).toBe("in flight 1 (max in flight 1)");
    const s = await status("queued");
    expect(s.stderr.filter((line) => line.includes("call "))).toEqual(["call wait_for", "call concurrent"]);
    expect(s.calls_served).toBe(2);
  });

  it("does not hold one child's calls behind another's", async () => {
    const held = gate();
    let slowDone = false;
    const slow = call("serial", "wait_for", { path: held }).then((result) => ((slowDone = true), result));
    expect(textOf(await call("lazy", "echo", { text: "quick" }))).toBe("quick");
    expect(slowDone).toBe(false);
    writeFileSync(held, "");
    expect(textOf(await slow)).toBe(`found ${held} (max in flight 1)`);
  });
});

describe("closing", () => {
  it("closes a session on request, frees its process, and starts anew on next use", async () => {
    await call("closable", "echo", { text: "x" });
    const { pid } = await status("closable");
    const closed = await gaggle.metaJson<Record<string, unknown>>("close_child_session", { server_id: "closable" });
    expect(closed).toMatchObject({ server_id: "closable", status: "closed", uptime: expect.stringMatching(/^\d+\.\ds$/) });
    expect(await waitGone([pid!])).toEqual([]);
    expect((await status("closable")).status).toBe("stopped");
    expect(textOf(await call("closable", "echo", { text: "again" }))).toBe("again");
    expect((await status("closable")).pid).not.toBe(pid);
  });

  it("stops a child after idle_timeout_ms without calls", async () => {
    await call("idle", "echo", { text: "x" });
    const { pid } = await status("idle");
    const s = await until(
      () => status("idle"),
      (value) => value.status === "stopped",
    );
    expect(s.status).toBe("stopped");
    expect(await waitGone([pid!])).toEqual([]);
  });
});
