// The state machine's transition table and the lock that orders starts and stops, without a child process.
import { describe, expect, it } from "vitest";
import type { ChildState } from "../../src/children/child.js";
import type { Session } from "../../src/children/child-session.js";
import { ChildStateMachine, OperationLock, type Phase } from "../../src/children/child-state.js";

/** The machine carries the session without reading it, so a stand-in does. */
const session = { stand_in: true } as unknown as Session;
const startedAt = new Date(0);

const PHASES: Record<ChildState, Phase> = {
  not_started: { state: "not_started" },
  starting: { state: "starting", failedStarts: 0 },
  running: { state: "running", session, startedAt },
  stopping: { state: "stopping", session, startedAt },
  stopped: { state: "stopped" },
  failed: { state: "failed", failedStarts: 1, retryAt: 1000 },
};
const STATES = Object.keys(PHASES) as ChildState[];

/** How to reach each state from not_started along allowed transitions. */
const PATHS: Record<ChildState, ChildState[]> = {
  not_started: [],
  starting: ["starting"],
  running: ["starting", "running"],
  stopping: ["starting", "running", "stopping"],
  stopped: ["starting", "running", "stopping", "stopped"],
  failed: ["starting", "failed"],
};

/** The transitions the machine must allow, and no others: child-state.ts's table, restated so that changing it takes a change here too. */
const ALLOWED: Record<ChildState, ChildState[]> = {
  not_started: ["starting"],
  starting: ["running", "failed"],
  running: ["stopping", "failed"],
  stopping: ["stopped"],
  stopped: ["starting"],
  failed: ["starting", "stopped"],
};

function machineIn(state: ChildState): ChildStateMachine {
  const machine = new ChildStateMachine("kid");
  for (const step of PATHS[state]) machine.move(PHASES[step]);
  expect(machine.state).toBe(state);
  return machine;
}

describe("ChildStateMachine", () => {
  it("starts in not_started", () => {
    expect(new ChildStateMachine("kid").phase).toEqual({ state: "not_started" });
  });

  it("allows exactly the transitions in its table, and refuses any other with an error naming both states", () => {
    const moved = Object.fromEntries(STATES.map((state) => [state, [] as ChildState[]]));
    for (const from of STATES) {
      for (const to of STATES) {
        const machine = machineIn(from);
        let refused: unknown;
        try {
          machine.move(PHASES[to]);
        } catch (error) {
          refused = error;
        }
        if (refused === undefined) {
          expect(machine.phase).toBe(PHASES[to]);
          moved[from]!.push(to);
        } else {
          expect(refused).toEqual(new Error(`kid: no transition from ${from} to ${to}`));
          expect(machine.state).toBe(from);
        }
      }
    }
    expect(moved).toEqual(ALLOWED);
  });

  it("offers the session to calls only while running", () => {
    const machine = machineIn("running");
    expect(machine.running).toBe(session);
    machine.move(PHASES.stopping);
    expect(machine.running).toBeUndefined();
  });
});

describe("OperationLock", () => {
  /** An operation that records when it begins and ends only when the test says. */
  function controlled(log: string[], name: string) {
    let finish!: (fail?: Error) => void;
    const operation = () =>
      new Promise<string>((resolve, reject) => {
        log.push(`begin ${name}`);
        finish = (fail) => {
          log.push(`end ${name}`);
          if (fail) reject(fail);
          else resolve(name);
        };
      });
    return { operation, finish: (fail?: Error) => finish(fail) };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it("runs operations one at a time, in the order they were asked for", async () => {
    const lock = new OperationLock();
    const log: string[] = [];
    const [a, b, c] = ["a", "b", "c"].map((name) => controlled(log, name));
    const results = [a!, b!, c!].map((op) => lock.run(op.operation));
    await settle();
    expect(log).toEqual(["begin a"]);
    a!.finish();
    await settle();
    expect(log).toEqual(["begin a", "end a", "begin b"]);
    b!.finish();
    await settle();
    c!.finish();
    expect(await Promise.all(results)).toEqual(["a", "b", "c"]);
    expect(log).toEqual(["begin a", "end a", "begin b", "end b", "begin c", "end c"]);
  });

  it("runs the next operation after one that fails, and gives the failure to its own caller only", async () => {
    const lock = new OperationLock();
    const log: string[] = [];
    const [a, b] = ["a", "b"].map((name) => controlled(log, name));
    const failing = lock.run(a!.operation);
    const next = lock.run(b!.operation);
    await settle();
    a!.finish(new Error("start failed"));
    await expect(failing).rejects.toThrow("start failed");
    await settle();
    expect(log).toEqual(["begin a", "end a", "begin b"]);
    b!.finish();
    expect(await next).toBe("b");
    // An operation that throws before returning a promise does not block the next either.
    const throwing = lock.run(() => {
      throw new Error("thrown at once");
    });
    await expect(throwing).rejects.toThrow("thrown at once");
    expect(await lock.run(async () => "after")).toBe("after");
  });
});
