import { describe, expect, it } from "vitest";
import { Cancellation } from "../../../src/children/calls/cancellation.js";

describe("Cancellation", () => {
  it("runs each listener once, in order, with the reason; later aborts change nothing", () => {
    const cancel = new Cancellation();
    const heard: string[] = [];
    cancel.onAbort((reason) => heard.push(`first ${String(reason)}`));
    cancel.onAbort((reason) => heard.push(`second ${String(reason)}`));
    expect(cancel.aborted).toBe(false);
    cancel.abort("client gave up");
    cancel.abort("again");
    expect(heard).toEqual(["first client gave up", "second client gave up"]);
    expect(cancel.aborted).toBe(true);
    expect(cancel.reason).toBe("client gave up");
  });

  it("runs a listener added after the abort at once, and never runs a removed one", () => {
    const cancel = new Cancellation();
    const heard: string[] = [];
    const remove = cancel.onAbort(() => heard.push("removed"));
    cancel.onAbort(() => heard.push("kept"));
    remove();
    cancel.abort("stop");
    cancel.onAbort((reason) => heard.push(`late ${String(reason)}`));
    expect(heard).toEqual(["kept", "late stop"]);
  });

  it("gives an AbortSignal that follows it, whether asked for before or after the abort", () => {
    const before = new Cancellation();
    const signal = before.signal;
    expect(before.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    before.abort("stop");
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe("stop");

    const after = new Cancellation();
    after.abort("late");
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe("late");
  });

  it("follows the signal it was made from, and hands that signal out", () => {
    const controller = new AbortController();
    const cancel = new Cancellation(controller.signal);
    const heard: unknown[] = [];
    cancel.onAbort((reason) => heard.push(reason));
    expect(cancel.signal).toBe(controller.signal);
    controller.abort("closed");
    expect(heard).toEqual(["closed"]);
    expect(cancel.aborted).toBe(true);

    const aborted = new AbortController();
    aborted.abort("already");
    expect(new Cancellation(aborted.signal).reason).toBe("already");
  });
});
