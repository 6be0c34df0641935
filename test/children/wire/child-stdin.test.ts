// Writing to a stdio child's stdin as it dies, stops reading, or closes it: every call ends as the calls in flight do, and no listener piles up.
import type * as ChildProcesses from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { GaggleError } from "../../../src/shared/errors.js";
import { textOf } from "../../helpers/gaggle.js";
import { callOf, closeMadeChildren, mcpChildOf, refusal } from "../../helpers/mcp-child.js";
import { until } from "../../helpers/poll.js";

// Every process the child layer spawns, as it is: the test needs the child's own ChildProcess to hear its exit first-hand.
const spawned = vi.hoisted(() => [] as ChildProcess[]);
vi.mock("node:child_process", async (importOriginal) => {
  const actual = await importOriginal<typeof ChildProcesses>();
  const spawn = (...args: Parameters<typeof actual.spawn>): ChildProcess => {
    const process = actual.spawn(...args);
    spawned.push(process);
    return process;
  };
  return { ...actual, spawn };
});

afterEach(closeMadeChildren);

describe("a call sent as its child dies", () => {
  it("fails with SERVER_FAILED saying how the child ended, as the call in flight does, not with a session error", async () => {
    const { child } = mcpChildOf("crash.mjs");
    expect(textOf(await callOf(child, "ok"))).toBe("ok");
    const leader = spawned.find((process) => process.pid === child.status().pid)!;
    // Node has closed the child's stdin when it tells of the exit; gaggle has not yet read the child's last output.
    let sentAtExit: Promise<GaggleError> | undefined;
    leader.once("exit", () => (sentAtExit = refusal(callOf(child, "ok"))));
    const inFlight = await refusal(callOf(child, "crash", { after_ms: 0 }));
    // The call in flight fails only once the exit has been seen.
    const atExit = await sentAtExit!;
    expect(inFlight).toMatchObject({ code: "SERVER_FAILED", message: expect.stringContaining('subject exited (code 3) while serving tool "crash"') });
    expect(atExit).toMatchObject({ code: "SERVER_FAILED", message: expect.stringContaining('subject exited (code 3) while serving tool "ok"') });
    expect(atExit.message).toContain("crash fixture: about to die");
  });

  it("fails a call whose write finds the pipe gone (EPIPE) as the child's exit, once the exit is seen", async () => {
    const { child } = mcpChildOf("crash.mjs");
    expect(textOf(await callOf(child, "deaf", { after_ms: 400 }))).toBe("deaf");
    await until(
      () => child.status().stderrTail.join("\n"),
      (tail) => tail.includes("no longer reading"),
    );
    // Past the pipe's buffer, so the write waits to drain and is told EPIPE instead.
    const refused = await refusal(callOf(child, "echo_size", { text: "x".repeat(1_000_000) }));
    expect(refused).toMatchObject({
      code: "SERVER_FAILED",
      message: expect.stringContaining('subject exited (code 4) while serving tool "echo_size"'),
    });
  });

  it("waits on one drain for every write a child that stops reading leaves buffered, and answers them all", async () => {
    const { child } = mcpChildOf("crash.mjs", "concurrency = 24");
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      expect(textOf(await callOf(child, "stall", { ms: 500 }))).toBe("stalled");
      await until(
        () => child.status().stderrTail.join("\n"),
        (tail) => tail.includes("crash fixture: stalled"),
      );
      const sizes = await Promise.all(Array.from({ length: 24 }, () => callOf(child, "echo_size", { text: "y".repeat(200_000) })));
      expect(sizes.map(textOf)).toEqual(Array.from({ length: 24 }, () => "200000"));
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });
});
