// What an observed request ended in once it was cancelled: no failure of the child, and the cancellation's reason.
import { describe, expect, it } from "vitest";
import { Cancellation } from "../../src/children/calls/cancellation.js";
import { CANCELLED, cancelledOr, failureOutcome, outcomeOf } from "../../src/shared/observer.js";

describe("cancelledOr", () => {
  const thrown = failureOutcome(Object.assign(new Error("echo closed its connection while serving tool sleep"), { code: "SERVER_FAILED" }));

  it("keeps a failure of a request nobody cancelled", () => {
    expect(cancelledOr(thrown, new Cancellation())).toEqual(thrown);
    expect(cancelledOr(thrown, undefined)).toEqual(thrown);
  });

  it("makes the failure of a cancelled request CANCELLED, with the cancellation's reason as its message", () => {
    const ended = new Cancellation();
    ended.abort(new Error("the client's session ended"));
    expect(cancelledOr(thrown, ended)).toEqual(outcomeOf(CANCELLED, "the client's session ended", undefined));
    const told = new Cancellation();
    told.abort("changed my mind");
    expect(cancelledOr(thrown, told)).toEqual(outcomeOf(CANCELLED, "changed my mind", undefined));
  });

  it("keeps an answer that came before the cancellation mattered: a result, or a tool's isError result", () => {
    const cancelled = new Cancellation();
    cancelled.abort("late");
    const answered = outcomeOf(undefined, undefined, { content: [] });
    expect(cancelledOr(answered, cancelled)).toBe(answered);
    const toolError = outcomeOf("tool_error", undefined, { content: [], isError: true });
    expect(cancelledOr(toolError, cancelled)).toBe(toolError);
  });
});
