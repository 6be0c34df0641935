// The calls waiting for a modern client's answers: a requestState is unguessable, single-use, expiring, bounded and bound.
import { describe, expect, it } from "vitest";
import { Cancellation } from "../../src/children/calls/cancellation.js";
import type { ModernExchange } from "../../src/gateway/modern/exchange.js";
import { ParkedCalls, type CallBinding } from "../../src/gateway/modern/parked-calls.js";
import { ResumableCall } from "../../src/gateway/modern/resumable-call.js";
import { type WireError } from "../../src/shared/errors.js";
import { ManualClock } from "../helpers/manual-clock.js";

const binding: CallBinding = { method: "tools/call", target: "protocol__elicit", principal: "ann", client: "inspector@" };

class Recorded {
  abandoned: Error | undefined;
  abandon(reason: Error): void {
    this.abandoned = reason;
  }
}

function table(options: { ttlMs?: number; max?: number } = {}) {
  const clock = new ManualClock();
  return { clock, parked: new ParkedCalls<Recorded>({ ttlMs: options.ttlMs ?? 1000, max: options.max ?? 8, clock }) };
}

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error as WireError;
  }
  throw new Error("expected a refusal");
};

describe("ParkedCalls", () => {
  it("resumes a call once with the state it issued; a second use, a changed state or another request is -32602", () => {
    const { parked } = table();
    const call = new Recorded();
    const state = parked.park(call, binding);
    expect(state).toMatch(/^gaggle1\.[A-Za-z0-9_-]{43}$/);
    expect(parked.park(new Recorded(), binding)).not.toBe(state);

    expect(refusal(() => parked.take(`${state}-TAMPERED`, binding))).toMatchObject({ code: -32602, data: { reason: "invalid_request_state" } });
    const other = refusal(() => parked.take(state, { ...binding, target: "protocol__sample" }));
    expect(other).toMatchObject({ code: -32602, message: expect.stringContaining("issued for tools/call protocol__elicit") });
    expect(refusal(() => parked.take(state, { ...binding, client: "someone-else@" })).code).toBe(-32602);
    // Another principal whose client calls itself the same.
    expect(refusal(() => parked.take(state, { ...binding, principal: "bob" })).code).toBe(-32602);

    // Refusals for another request leave the state to its own client.
    expect(parked.take(state, binding)).toBe(call);
    expect(refusal(() => parked.take(state, binding)).message).toContain("unknown, expired or already used");
    expect(call.abandoned).toBeUndefined();
  });

  it("abandons a call whose client does not come back in time, and forgets its state", () => {
    const { clock, parked } = table({ ttlMs: 1000 });
    const late = new Recorded();
    const prompt = new Recorded();
    const lateState = parked.park(late, binding);
    clock.advance(600);
    const promptState = parked.park(prompt, binding);
    clock.advance(500);
    expect(late.abandoned?.message).toContain("within 1000ms");
    expect(refusal(() => parked.take(lateState, binding)).code).toBe(-32602);
    expect(parked.take(promptState, binding)).toBe(prompt);
    clock.advance(10_000);
    expect(prompt.abandoned).toBeUndefined();
    expect(clock.pending).toBe(0);
  });

  it("holds at most `max` calls: one more is abandoned with an error that says so", () => {
    const { parked } = table({ max: 2 });
    parked.park(new Recorded(), binding);
    parked.park(new Recorded(), binding);
    const third = new Recorded();
    expect(refusal(() => parked.park(third, binding)).message).toContain("already holds 2 calls");
    expect(third.abandoned).toBeDefined();
    expect(parked.size).toBe(2);
  });

  it("abandonAll cancels every parked call", () => {
    const { clock, parked } = table();
    const calls = [new Recorded(), new Recorded()];
    for (const call of calls) parked.park(call, binding);
    parked.abandonAll(new Error("shutting down"));
    expect(calls.map((call) => call.abandoned?.message)).toEqual(["shutting down", "shutting down"]);
    expect(parked.size).toBe(0);
    expect(clock.pending).toBe(0);
  });
});

const exchange = (): ModernExchange => ({ notify: () => {}, cancel: new Cancellation(), principal: "local" });

describe("ResumableCall", () => {
  const signal = () => new AbortController().signal;

  it("ends a round with the child's questions, and the answers resume the child's requests", async () => {
    const call = new ResumableCall({ elicitation: {}, roots: {} });
    let finish!: (result: Record<string, unknown>) => void;
    call.follow(new Promise((resolve) => (finish = resolve)));
    const name = call.ask({ method: "elicitation/create", params: { message: "name?" } }, signal());
    const roots = call.ask({ method: "roots/list" }, signal());
    const questions = {
      inputRequests: { elicitation_1: { method: "elicitation/create", params: { message: "name?" } }, roots_2: { method: "roots/list" } },
    };
    expect(await call.round(exchange())).toEqual(questions);

    // An answer that is not an object, or a key never asked, answers nothing: the question is asked again.
    await call.answer({ elicitation_1: 12345, other: { roots: [] } });
    expect(await call.round(exchange())).toEqual(questions);

    await call.answer({ elicitation_1: { action: "accept", content: { name: "Ada" } }, roots_2: { roots: [] } });
    await expect(name).resolves.toEqual({ action: "accept", content: { name: "Ada" } });
    await expect(roots).resolves.toEqual({ roots: [] });
    finish({ content: [] });
    expect(await call.round(exchange())).toEqual({ result: { content: [] } });
  });

  it("a question the client has no capability for fails the call with -32021 naming it, and cancels the child's call", async () => {
    const call = new ResumableCall({ sampling: {} });
    call.follow(new Promise(() => {}));
    await expect(call.ask({ method: "elicitation/create", params: { mode: "url", url: "https://x" } }, signal())).rejects.toMatchObject({
      code: -32021,
    });
    await expect(call.round(exchange())).rejects.toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: { url: {} } } } });
    expect(call.cancel.aborted).toBe(true);
  });

  it("the client closing a round's stream cancels the child's call", async () => {
    const call = new ResumableCall({});
    // As a child's call does: it fails once cancelled.
    call.follow(new Promise((_, reject) => call.cancel.onAbort(reject)));
    const round = exchange();
    const outcome = call.round(round);
    round.cancel.abort(new Error("stream closed"));
    await expect(outcome).rejects.toThrow("stream closed");
  });

  it("an abandoned call refuses the child's open questions and cancels its call", async () => {
    const call = new ResumableCall({ sampling: {} });
    call.follow(new Promise(() => {}));
    const question = call.ask({ method: "sampling/createMessage", params: { messages: [] } }, signal());
    call.abandon(new Error("gone"));
    await expect(question).rejects.toThrow("has ended");
    expect(call.cancel.aborted).toBe(true);
    await expect(call.round(exchange())).rejects.toThrow("gone");
  });
});
