// McpChild's timed behaviour on fake time, with real fixture processes: the back-off after failed starts and the idle timeout.
import { afterEach, describe, expect, it } from "vitest";
import { Cancellation } from "../../src/children/calls/cancellation.js";
import type { Caller } from "../../src/children/child.js";
import type { McpChild } from "../../src/children/mcp-child.js";
import { textOf } from "../helpers/gaggle.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { callOf, closeMadeChildren, mcpChildOf, refusal, settle } from "../helpers/mcp-child.js";
import { until } from "../helpers/poll.js";
import { isAlive, waitGone } from "../helpers/processes.js";

afterEach(closeMadeChildren);

describe("ManualClock", () => {
  it("fires due timers in order as time advances, one set while firing included, and never one called off", () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.after(30, () => fired.push(`c@${clock.now()}`));
    clock.after(10, () => {
      fired.push(`a@${clock.now()}`);
      clock.after(5, () => fired.push(`chained@${clock.now()}`));
    });
    const callOff = clock.after(20, () => fired.push("called off"));
    clock.after(10, () => fired.push(`b@${clock.now()}`));
    callOff();
    clock.advance(29);
    expect(fired).toEqual(["a@10", "b@10", "chained@15"]);
    expect(clock.now()).toBe(29);
    clock.advance(1);
    expect(fired).toEqual(["a@10", "b@10", "chained@15", "c@30"]);
    expect(clock.pending).toBe(0);
  });
});

describe("back-off after failed starts", () => {
  const FATAL = "fatal: FIXTURE_API_KEY is not set";
  /** How many times the fixture has run: it prints this line once per start. */
  const runs = (child: McpChild) => child.status().stderrTail.filter((line) => line === FATAL).length;
  const attempt = (child: McpChild) => refusal(callOf(child, "anything"));

  it("refuses calls while it lasts, doubles it after each failure in a row, and forgets it on close", async () => {
    const { child, clock } = mcpChildOf("exit-at-start.mjs");
    // Its first start runs it twice: a child that ends when asked server/discover before initialize is started
    // again at once to be initialized, once for good (see connectSession). Each later start runs it once.
    const first = await attempt(child);
    expect(first.code).toBe("SERVER_FAILED");
    expect(first.message).toContain("subject failed to start: exited (code 1)");
    expect(first.message).toContain(FATAL);
    expect(runs(child)).toBe(2);

    // Refused at once, without running the fixture again; exact, since the clock has not moved.
    const refused = await attempt(child);
    expect(refused.code).toBe("SERVER_FAILED");
    expect(refused.message).toBe(
      "subject failed to start 1 time(s) in a row; the next attempt is allowed in 1.0s. Last error: failed to start: exited (code 1)" +
        "; last stderr lines:\nfatal: FIXTURE_API_KEY is not set",
    );
    expect(runs(child)).toBe(2);
    clock.advance(999);
    expect((await attempt(child)).message).toContain("failed to start 1 time(s) in a row");
    expect(runs(child)).toBe(2);

    // Once the back-off has passed, a call starts the child again; a second failure in a row doubles the wait.
    clock.advance(1);
    expect((await attempt(child)).message).toContain("subject failed to start: exited (code 1)");
    expect(runs(child)).toBe(3);
    expect((await attempt(child)).message).toContain("subject failed to start 2 time(s) in a row; the next attempt is allowed in 2.0s");
    clock.advance(1999);
    expect((await attempt(child)).message).toContain("failed to start 2 time(s) in a row");
    expect(runs(child)).toBe(3);
    const status = child.status();
    expect(status).toMatchObject({ state: "failed", pid: null, lastError: "failed to start: exited (code 1)" });
    expect(status.stderrTail).toContain(FATAL);

    // close() forgets the failures: the next call starts the child at once, though the clock has not moved.
    expect(await child.close()).toEqual({ uptimeMs: null });
    expect(child.status().state).toBe("stopped");
    expect((await attempt(child)).message).toContain("subject failed to start: exited (code 1)");
    expect(runs(child)).toBe(4);
    expect((await attempt(child)).message).toContain("failed to start 1 time(s) in a row; the next attempt is allowed in 1.0s");
  });
});

describe("idle timeout", () => {
  const IDLE_MS = 60_000;
  const stopped = (child: McpChild) =>
    until(
      () => child.status().state,
      (state) => state === "stopped",
    );

  it("stops the session, and its process, once idle_timeout_ms pass without a call", async () => {
    const { child, clock } = mcpChildOf("echo.mjs", `idle_timeout_ms = ${IDLE_MS}`);
    expect(textOf(await callOf(child, "echo", { text: "x" }))).toBe("x");
    const { state, pid } = child.status();
    expect(state).toBe("running");
    expect(isAlive(pid!)).toBe(true);
    clock.advance(IDLE_MS - 1);
    await settle();
    expect(child.status().state).toBe("running");
    clock.advance(1);
    await stopped(child);
    expect(await waitGone([pid!])).toEqual([]);
  });

  it("counts every request as use, not only tool calls: reading a resource or listing tools puts the stop off", async () => {
    const { child, clock } = mcpChildOf("echo.mjs", `idle_timeout_ms = ${IDLE_MS}`);
    await callOf(child, "echo", { text: "x" });
    clock.advance(IDLE_MS - 1);
    const read = await child.readResource("fixture://readme", {});
    expect(read.contents[0]).toMatchObject({ uri: "fixture://readme" });
    clock.advance(IDLE_MS - 1);
    await settle();
    expect(child.status().state).toBe("running");
    await child.schema();
    clock.advance(IDLE_MS - 1);
    await settle();
    expect(child.status().state).toBe("running");
    clock.advance(1);
    await stopped(child);
  });

  /**
   * A client whose answer to the child's sampling request waits until the test releases it: the protocol
   * fixture's `sample` call stays in flight exactly as long as the test wants, with no time passing.
   */
  function heldClient() {
    let asked!: () => void;
    let release!: () => void;
    const wasAsked = new Promise<void>((resolve) => (asked = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const caller: Caller = {
      sessionId: "held",
      principal: "local",
      forward: async () => {
        asked();
        await released;
        return { role: "assistant", content: { type: "text", text: "released" }, model: "test" };
      },
      log: () => {},
    };
    return { caller, wasAsked, release };
  }

  it.each(["answered", "cancelled"] as const)(
    "never stops a child with a call in flight, and counts again from when the last call settles (%s)",
    async (outcome) => {
      const { child, clock } = mcpChildOf("protocol.mjs", `idle_timeout_ms = ${IDLE_MS}`);
      expect(textOf(await callOf(child, "log_level"))).toBe("unset");
      const client = heldClient();
      const cancel = new Cancellation();
      const held = callOf(child, "sample", { prompt: "wait" }, { caller: client.caller, cancel });
      await client.wasAsked;
      // Another call begins and ends meanwhile: it is not the last, so it arms nothing.
      expect(textOf(await callOf(child, "log_level", {}, { caller: client.caller }))).toBe("unset");
      clock.advance(IDLE_MS * 2);
      await settle();
      expect(child.status().state).toBe("running");

      if (outcome === "answered") {
        client.release();
        expect(textOf(await held)).toBe("sampled: released");
      } else {
        cancel.abort(new Error("the test gave up"));
        expect((await refusal(held)).message).toContain("the test gave up");
        client.release();
      }
      clock.advance(IDLE_MS - 1);
      await settle();
      const { state, pid } = child.status();
      expect(state).toBe("running");
      clock.advance(1);
      await stopped(child);
      expect(await waitGone([pid!])).toEqual([]);
    },
  );
});
