import { describe, expect, it } from "vitest";
import { Cancellation } from "../../../src/children/calls/cancellation.js";
import { SessionGate } from "../../../src/children/calls/session-gate.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("SessionGate", () => {
  it("lets one client's calls in together, and another client in once they have all left", async () => {
    const gate = new SessionGate();
    const a1 = await gate.enter("a");
    const a2 = await gate.enter("a");
    expect(gate.tryEnter("b")).toBeUndefined();
    a1();
    expect(gate.tryEnter("b")).toBeUndefined();
    a2();
    expect(gate.tryEnter("b")).toBeDefined();
  });

  it("holds another client's call until the first client's calls are done", async () => {
    const gate = new SessionGate();
    const order: string[] = [];
    const a1 = await gate.enter("a");
    const b = gate.enter("b").then((leave) => (order.push("b"), leave));
    await tick();
    expect(order).toEqual([]);
    a1();
    (await b)();
    expect(order).toEqual(["b"]);
  });

  it("admits waiting clients in order, so a busy client cannot starve another", async () => {
    const gate = new SessionGate();
    const order: string[] = [];
    const first = await gate.enter("a");
    const waiting = [
      gate.enter("b").then((leave) => (order.push("b1"), leave)),
      gate.enter("a").then((leave) => (order.push("a2"), leave)),
      gate.enter("b").then((leave) => (order.push("b2"), leave)),
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
    const gate = new SessionGate();
    const a1 = gate.tryEnter("a")!;
    const a2 = gate.tryEnter("a")!;
    expect(gate.tryEnter("b")).toBeUndefined();
    const b = gate.enter("b");
    // A waiting client keeps its turn: the owner's later calls queue behind it instead of slipping in.
    expect(gate.tryEnter("a")).toBeUndefined();
    a1();
    a1();
    expect(gate.tryEnter("b")).toBeUndefined();
    a2();
    const leaveB = await b;
    expect(gate.tryEnter("b")).toBeDefined();
    expect(gate.tryEnter("a")).toBeUndefined();
    leaveB();
  });

  it("drops a waiting call that is cancelled, and admits the next one in its place", async () => {
    const gate = new SessionGate();
    const a = gate.tryEnter("a")!;
    const cancel = new Cancellation();
    const b = gate.enter("b", cancel);
    const c = gate.enter("c");
    cancel.abort("the client gave up");
    await expect(b).rejects.toThrow("cancelled by the caller: the client gave up");
    a();
    const leaveC = await c;
    expect(gate.tryEnter("b")).toBeUndefined();
    leaveC();
    expect(gate.tryEnter("b")).toBeDefined();
  });
});
