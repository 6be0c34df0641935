// Which client a child's own request goes to when several clients' calls are in flight.
import { describe, expect, it } from "vitest";
import type { Caller } from "../../../src/children/child.js";
import { CallerTracker } from "../../../src/children/wire/caller-tracker.js";

const caller = (sessionId: string, paused = false): Caller => ({
  sessionId,
  principal: "local",
  paused,
  forward: () => Promise.resolve({}),
  log: () => {},
});

describe("CallerTracker.target", () => {
  it("is the oldest call in flight, then the last client once none is", () => {
    const tracker = new CallerTracker();
    const [a, b] = [caller("a"), caller("b")];
    expect(tracker.target()).toBeUndefined();
    tracker.begin(a);
    tracker.begin(b);
    expect(tracker.target()).toBe(a);
    tracker.end(a);
    expect(tracker.target()).toBe(b);
    tracker.end(b);
    expect(tracker.target()).toBe(b);
  });

  it("passes over a call paused for its client's answers while another call is in flight", () => {
    const tracker = new CallerTracker();
    const [parked, running] = [caller("parked", true), caller("running")];
    tracker.begin(parked);
    expect(tracker.target()).toBe(parked);
    tracker.begin(running);
    expect(tracker.target()).toBe(running);
  });
});
