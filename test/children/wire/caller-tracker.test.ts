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
    const callOfA = tracker.begin(a);
    const callOfB = tracker.begin(b);
    expect(tracker.target()).toBe(a);
    tracker.end(callOfA);
    expect(tracker.target()).toBe(b);
    tracker.end(callOfB);
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

describe("CallerTracker's calls in flight", () => {
  it("stay in the order they began as calls end out of order, many at a time", () => {
    const tracker = new CallerTracker();
    const callers = Array.from({ length: 200 }, (_, i) => caller(`s${i}`));
    const calls = callers.map((c) => tracker.begin(c));
    // Every third call ends, then the rest but the last ten, newest first: the front fills with ended calls, which
    // go once they are half the list.
    const ended = new Set<number>();
    const end = (i: number) => {
      tracker.end(calls[i]);
      ended.add(i);
    };
    for (let i = 0; i < 200; i += 3) end(i);
    const open = () => callers.filter((_, i) => !ended.has(i)).map((c) => c.sessionId);
    expect(tracker.active().map((c) => c.sessionId)).toEqual(open());
    for (let i = 189; i >= 0; i--) if (!ended.has(i)) end(i);
    expect(tracker.active().map((c) => c.sessionId)).toEqual(open());
    expect(tracker.target()).toBe(callers[190]);
    // Calls that begin now come after those still in flight.
    const late = caller("late");
    const lateCall = tracker.begin(late);
    expect(tracker.active().at(-1)).toBe(late);
    expect(tracker.serves((id) => id === "late")).toBe(true);
    for (let i = 190; i < 200; i++) end(i);
    expect(tracker.target()).toBe(late);
    tracker.end(lateCall);
    expect(tracker.active()).toEqual([]);
    expect(tracker.serves(() => true)).toBe(false);
    // None in flight: the last client that began one.
    expect(tracker.target()).toBe(late);
  });

  it("count a caller once for each call it began", () => {
    const tracker = new CallerTracker();
    const [a, b] = [caller("a"), caller("b")];
    const first = tracker.begin(a);
    const second = tracker.begin(a);
    tracker.begin(b);
    expect(tracker.active()).toEqual([a, b]);
    tracker.end(first);
    expect(tracker.target()).toBe(a);
    tracker.end(second);
    expect(tracker.target()).toBe(b);
  });
});
