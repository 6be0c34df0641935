import { describe, expect, it } from "vitest";
import { CallLine, type Leave } from "../../../src/children/calls/call-line.js";
import { Cancellation } from "../../../src/children/calls/cancellation.js";

/** A line's calls as the router runs them: in at once when there is room, else after waiting; the place given back however they end. */
class Queue extends CallLine {
  constructor(concurrency: number) {
    super(concurrency, false);
  }

  run<T>(call: () => Promise<T>, cancel?: Cancellation): Promise<T> {
    const now = this.tryEnter("local", "local");
    if (now) return leaving(now, call);
    return this.enter("local", "local", cancel).then((leave) => leaving(leave, call));
  }
}

async function leaving<T>(leave: Leave, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } finally {
    leave();
  }
}

/** A line that lets one client at a time in, as every real child's is. */
const gateOf = () => new CallLine(Infinity, true);

const tick = () => new Promise((resolve) => setImmediate(resolve));

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

describe("CallLine: at most `concurrency` calls at once", () => {
  it.each([1, 2, 3])("runs at most %i calls at once and starts waiting calls in order", async (concurrency) => {
    const calls = controlledCalls();
    const queue = new Queue(concurrency);
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
    const queue = new Queue(2);
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
    const queue = new Queue(1);
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
    const queue = new Queue(1);
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

describe("CallLine: one client at a time", () => {
  it("lets one client's calls in together, and another client in once they have all left", async () => {
    const gate = gateOf();
    const a1 = await gate.enter("a", "local");
    const a2 = await gate.enter("a", "local");
    expect(gate.tryEnter("b", "local")).toBeUndefined();
    a1();
    expect(gate.tryEnter("b", "local")).toBeUndefined();
    a2();
    expect(gate.tryEnter("b", "local")).toBeDefined();
  });

  it("holds another client's call until the first client's calls are done", async () => {
    const gate = gateOf();
    const order: string[] = [];
    const a1 = await gate.enter("a", "local");
    const b = gate.enter("b", "local").then((leave) => (order.push("b"), leave));
    await tick();
    expect(order).toEqual([]);
    a1();
    (await b)();
    expect(order).toEqual(["b"]);
  });

  it("admits waiting clients in order, so a busy client cannot starve another", async () => {
    const gate = gateOf();
    const order: string[] = [];
    const first = await gate.enter("a", "local");
    const waiting = [
      gate.enter("b", "local").then((leave) => (order.push("b1"), leave)),
      gate.enter("a", "local").then((leave) => (order.push("a2"), leave)),
      gate.enter("b", "local").then((leave) => (order.push("b2"), leave)),
    ];
    await tick();
    expect(order).toEqual([]);
    first();
    const b1 = await waiting[0]!;
    await tick();
    expect(order).toEqual(["b1"]);
    b1();
    (await waiting[1]!)();
    (await waiting[2]!)();
    expect(order).toEqual(["b1", "a2", "b2"]);
  });

  it("admits at once without waiting, or says the call must wait", async () => {
    const gate = gateOf();
    const a1 = gate.tryEnter("a", "local")!;
    const a2 = gate.tryEnter("a", "local")!;
    expect(gate.tryEnter("b", "local")).toBeUndefined();
    const b = gate.enter("b", "local");
    // A waiting client keeps its turn: the owner's later calls queue behind it instead of slipping in.
    expect(gate.tryEnter("a", "local")).toBeUndefined();
    a1();
    a1();
    expect(gate.tryEnter("b", "local")).toBeUndefined();
    a2();
    const leaveB = await b;
    expect(gate.tryEnter("b", "local")).toBeDefined();
    expect(gate.tryEnter("a", "local")).toBeUndefined();
    leaveB();
  });

  it("drops a waiting call that is cancelled, and admits the next one in its place", async () => {
    const gate = gateOf();
    const a = gate.tryEnter("a", "local")!;
    const cancel = new Cancellation();
    const b = gate.enter("b", "local", cancel);
    const c = gate.enter("c", "local");
    cancel.abort("the client gave up");
    await expect(b).rejects.toThrow("cancelled by the caller: the client gave up");
    a();
    const leaveC = await c;
    expect(gate.tryEnter("b", "local")).toBeUndefined();
    leaveC();
    expect(gate.tryEnter("b", "local")).toBeDefined();
  });
});

/** A line's calls as the router runs them, each made by a principal: in at once when there is room, else after waiting. */
function runAs<T>(line: CallLine, principal: string, call: () => Promise<T>, cancel?: Cancellation): Promise<T> {
  const now = line.tryEnter(principal, principal);
  if (now) return leaving(now, call);
  return line.enter(principal, principal, cancel).then((leave) => leaving(leave, call));
}

describe("CallLine: turns between principals", () => {
  /** Finishes the calls one at a time, each once it has started, in the order they start. */
  async function drain(calls: ReturnType<typeof controlledCalls>, count: number): Promise<void> {
    for (let done = 0; done < count; done++) {
      calls.finish(calls.started[done]!);
      await settle();
    }
  }

  it("lets another principal's call in right after the running one, not behind a flood", async () => {
    const calls = controlledCalls();
    const line = new CallLine(1, false);
    // ann: 0 to 3; bob: 10 and 11, arriving after all of ann's.
    const results = [0, 1, 2, 3].map((n) => runAs(line, "ann", calls.call(n)));
    results.push(runAs(line, "bob", calls.call(10)), runAs(line, "bob", calls.call(11)));
    expect({ running: line.running, waiting: line.waiting }).toEqual({ running: 1, waiting: 5 });
    await drain(calls, 6);
    await Promise.all(results);
    expect(calls.started).toEqual([0, 10, 1, 11, 2, 3]);
    expect({ running: line.running, waiting: line.waiting }).toEqual({ running: 0, waiting: 0 });
  });

  it("gives each principal with waiting calls a turn in a round, each in its own order", async () => {
    const calls = controlledCalls();
    const line = new CallLine(1, false);
    const results = [
      ...[0, 1, 2].map((n) => runAs(line, "ann", calls.call(n))),
      ...[10, 11].map((n) => runAs(line, "bob", calls.call(n))),
      runAs(line, "cat", calls.call(20)),
    ];
    await drain(calls, 6);
    await Promise.all(results);
    expect(calls.started).toEqual([0, 10, 20, 1, 11, 2]);
  });

  it("fills several freed places in turn", async () => {
    const calls = controlledCalls();
    const line = new CallLine(2, false);
    const results = [0, 1, 2, 3, 4].map((n) => runAs(line, "ann", calls.call(n)));
    results.push(runAs(line, "bob", calls.call(10)));
    expect(calls.started).toEqual([0, 1]);
    calls.finish(0);
    await settle();
    expect(calls.started).toEqual([0, 1, 10]);
    await drain(calls, 6);
    await Promise.all(results);
    expect(calls.started).toEqual([0, 1, 10, 2, 3, 4]);
    expect(calls.mostAtOnce).toBe(2);
  });

  it("takes a principal whose only waiting call is cancelled out of the round", async () => {
    const calls = controlledCalls();
    const line = new CallLine(1, false);
    const cancel = new Cancellation();
    const results = [0, 1, 2].map((n) => runAs(line, "ann", calls.call(n)));
    const cancelled = runAs(line, "bob", calls.call(10), cancel);
    const cat = runAs(line, "cat", calls.call(20));
    cancel.abort("bob gave up");
    await expect(cancelled).rejects.toThrow("cancelled by the caller: bob gave up");
    expect(line.waiting).toBe(3);
    await drain(calls, 4);
    await Promise.all([...results, cat]);
    expect(calls.started).toEqual([0, 20, 1, 2]);
  });

  it("takes turns between principals in a line that lets one client in at a time", async () => {
    const line = new CallLine(1, true);
    const order: string[] = [];
    // Each call ends as soon as it is let in, which lets the next one in.
    const entered = (name: string) => (leave: Leave) => {
      order.push(name);
      leave();
    };
    const a1 = line.tryEnter("ann", "ann")!;
    const waiting = [
      line.enter("ann", "ann").then(entered("a2")),
      line.enter("ann", "ann").then(entered("a3")),
      line.enter("bob", "bob").then(entered("b1")),
    ];
    a1();
    await Promise.all(waiting);
    expect(order).toEqual(["b1", "a2", "a3"]);
  });
});

describe("CallLine: what its depth says", () => {
  it("counts a call a place is free for, waiting only for another client's calls, as running; past the places, as waiting", async () => {
    const line = new CallLine(2, true);
    const a = line.tryEnter("a", "local")!;
    const b = line.enter("b", "local");
    const c = line.enter("c", "local");
    expect({ running: line.running, waiting: line.waiting }).toEqual({ running: 2, waiting: 1 });
    a();
    (await b)();
    (await c)();
    expect({ running: line.running, waiting: line.waiting }).toEqual({ running: 0, waiting: 0 });
  });
});
