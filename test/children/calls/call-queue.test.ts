import { describe, expect, it } from "vitest";
import { CallQueue } from "../../../src/children/calls/call-queue.js";
import { Cancellation } from "../../../src/children/calls/cancellation.js";

/** Calls that end when the test says: what started, in which order, and the most that ran at once. */
function controlledCalls() {
  const started: number[] = [];
  const finishers = new Map<number, () => void>();
  let running = 0;
  let mostAtOnce = 0;
  const call = (n: number) => () =>
    new Promise<number>((resolve) => {
      started.push(n);
      mostAtOnce = Math.max(mostAtOnce, ++running);
      finishers.set(n, () => {
        running--;
        resolve(n);
      });
    });
  return {
    call,
    started,
    finish: (n: number) => finishers.get(n)!(),
    get mostAtOnce() {
      return mostAtOnce;
    },
  };
}

/** Lets every settled promise's reactions run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("CallQueue", () => {
  it.each([1, 2, 3])("runs at most %i calls at once and starts waiting calls in order", async (concurrency) => {
    const calls = controlledCalls();
    const queue = new CallQueue(concurrency);
    const results: Array<Promise<number>> = [];
    // Calls arrive in three bursts, with some ending in between, so calls started at once and calls that
    // waited are in flight together.
    for (let n = 0; n < 5; n++) results.push(queue.run(calls.call(n)));
    expect(calls.started).toEqual([0, 1, 2].slice(0, concurrency));
    expect({ running: queue.running, waiting: queue.waiting }).toEqual({ running: concurrency, waiting: 5 - concurrency });
    calls.finish(0);
    await settle();
    for (let n = 5; n < 8; n++) results.push(queue.run(calls.call(n)));
    // Then each call ends in the order it started, until all eight have run.
    for (let n = 1; n < 8; n++) {
      expect(calls.started).toContain(n);
      calls.finish(n);
      await settle();
    }
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(calls.started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(calls.mostAtOnce).toBe(concurrency);
    expect({ running: queue.running, waiting: queue.waiting }).toEqual({ running: 0, waiting: 0 });
  });

  it("fills a freed slot from the line before taking a new call at once", async () => {
    const calls = controlledCalls();
    const queue = new CallQueue(2);
    const first = queue.run(calls.call(0));
    void queue.run(calls.call(1));
    void queue.run(calls.call(2));
    calls.finish(0);
    await first;
    await settle();
    // The waiting call got the slot; a new call waits behind the running ones.
    void queue.run(calls.call(3));
    expect(calls.started).toEqual([0, 1, 2]);
    expect({ running: queue.running, waiting: queue.waiting }).toEqual({ running: 2, waiting: 1 });
    calls.finish(1);
    await settle();
    expect(calls.started).toEqual([0, 1, 2, 3]);
    expect(calls.mostAtOnce).toBe(2);
  });

  it("drops a waiting call that is cancelled, and never starts it", async () => {
    const calls = controlledCalls();
    const queue = new CallQueue(1);
    const running = queue.run(calls.call(0));
    const cancel = new Cancellation();
    const cancelled = queue.run(calls.call(1), cancel);
    const after = queue.run(calls.call(2));
    cancel.abort(new Error("the client cancelled"));
    await expect(cancelled).rejects.toThrow("the client cancelled");
    expect(queue.waiting).toBe(1);
    calls.finish(0);
    await running;
    await settle();
    expect(calls.started).toEqual([0, 2]);
    calls.finish(2);
    expect(await after).toBe(2);
  });

  it("frees a slot when a call fails, whether it waited or not", async () => {
    const calls = controlledCalls();
    const queue = new CallQueue(1);
    await expect(queue.run(() => Promise.reject(new Error("the child failed")))).rejects.toThrow("the child failed");
    expect({ running: queue.running, waiting: queue.waiting }).toEqual({ running: 0, waiting: 0 });
    const first = queue.run(calls.call(0));
    const second = queue.run(() => Promise.reject(new Error("it failed after waiting")));
    const third = queue.run(calls.call(2));
    calls.finish(0);
    await first;
    await expect(second).rejects.toThrow("it failed after waiting");
    await settle();
    expect(calls.started).toEqual([0, 2]);
    calls.finish(2);
    expect(await third).toBe(2);
    expect({ running: queue.running, waiting: queue.waiting }).toEqual({ running: 0, waiting: 0 });
  });
});
