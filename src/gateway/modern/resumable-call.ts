// A modern client's call that a 2025-era child pauses to ask for input: the child's requests become an input_required
// result, and the client's retry answers them while the child's call goes on where it was.
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { CallHold } from "../../children/calls/call-hold.js";
import { Cancellation, cancelledError } from "../../children/calls/cancellation.js";
import { WireError } from "../../shared/errors.js";
import { isObject } from "../../shared/json.js";
import type { ModernExchange } from "./exchange.js";
import { declares, requiredCapability, type InputRequest } from "./input-capability.js";
import { MODERN_ERRORS } from "../../shared/modern-protocol.js";

type Result = Record<string, unknown>;

/** What one round of the call ends with: the call's own result, or the questions the client must answer first. */
export type RoundOutcome = { result: Result } | { inputRequests: Record<string, InputRequest> };

interface Ask {
  request: InputRequest;
  answer(result: Result): void;
  refuse(error: unknown): void;
}

/** Questions that arrive together (a child asking for several inputs at once) go out in one round. */
const GATHER_MS = 10;
const GATHER_MAX_MS = 100;

export class ResumableCall {
  /** The child's call: cancelled when the client gives up during a round, or when the call is abandoned between rounds. */
  readonly cancel = new Cancellation();
  /** The call's places at its child, given back while it waits for its client (see CallContext.holds). */
  readonly holds: CallHold[] = [];
  /** The child's questions not yet answered, by the key the client answers them under. */
  private readonly asks = new Map<string, Ask>();
  private asked = 0;
  private outcome: { result: Result } | { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly capabilities: ClientCapabilities) {}

  /** Follows the child's call; its end ends the call, whatever round it comes in. */
  follow(work: Promise<Result>): void {
    work.then(
      (result) => this.settle({ result }),
      (error: unknown) => this.settle({ error }),
    );
  }

  /**
   * A question from the child. A client that did not declare the capability it needs cannot be asked: the call
   * fails with -32021 naming it, and the child's call is cancelled.
   */
  ask(request: InputRequest, signal: AbortSignal): Promise<Result> {
    if (this.outcome !== undefined) return Promise.reject(new Error("the call this request belonged to has ended"));
    const required = requiredCapability(request);
    if (required === undefined || !declares(this.capabilities, required)) {
      const error = new WireError(
        MODERN_ERRORS.missingCapability,
        `the server behind this call asked for ${request.method}, which the client did not declare in its clientCapabilities`,
        { requiredCapabilities: required ?? {} },
      );
      this.settle({ error });
      this.cancel.abort(error);
      return Promise.reject(error);
    }
    return new Promise<Result>((resolve, reject) => {
      const key = `${request.method.split("/")[0]}_${++this.asked}`;
      const drop = () => this.asks.delete(key);
      this.asks.set(key, {
        request: { method: request.method, ...(request.params !== undefined && { params: request.params }) },
        answer: (result) => (drop(), resolve(result)),
        refuse: (error) => (drop(), reject(error)),
      });
      signal.addEventListener("abort", () => this.asks.get(key)?.refuse(cancelledError(signal.reason)), { once: true });
      this.wake?.();
    });
  }

  /** The round ended with questions: until the client answers, the call holds no place at its child. */
  park(): void {
    for (const hold of [...this.holds].reverse()) hold.release();
  }

  /**
   * Takes the call's places at its child again (waiting its turn), then answers the questions the client
   * answered; a key it did not answer (or answered with something other than an object) is asked again.
   */
  async answer(inputResponses: unknown): Promise<void> {
    for (const hold of this.holds) await hold.reacquire();
    if (!isObject(inputResponses)) return;
    for (const [key, response] of Object.entries(inputResponses)) {
      if (isObject(response)) this.asks.get(key)?.answer(response);
    }
  }

  /**
   * Runs one round on `exchange`: resolves with the call's result, or with its open questions once the child has
   * asked any; rejects with the call's error. The client closing the round's stream cancels the call.
   */
  async round(exchange: ModernExchange): Promise<RoundOutcome> {
    const stopFollowing = exchange.cancel.onAbort((reason) => this.cancel.abort(reason));
    try {
      if (this.outcome === undefined && this.asks.size === 0) await this.woken();
      if (this.outcome === undefined && this.asks.size > 0) await this.gathered();
      if (this.outcome !== undefined) {
        if ("error" in this.outcome) throw this.outcome.error;
        return this.outcome;
      }
      return { inputRequests: Object.fromEntries([...this.asks].map(([key, ask]) => [key, ask.request])) };
    } finally {
      stopFollowing();
    }
  }

  /** Gives the call up between rounds (its client never came back): the child's call is cancelled with `reason`. */
  abandon(reason: Error): void {
    this.settle({ error: reason });
    this.cancel.abort(reason);
  }

  private settle(outcome: { result: Result } | { error: unknown }): void {
    if (this.outcome !== undefined) return;
    this.outcome = outcome;
    // The call is over: nothing the child still asks can change its answer.
    for (const ask of [...this.asks.values()]) ask.refuse(new Error("the call this request belonged to has ended"));
    this.wake?.();
  }

  private woken(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = () => {
        this.wake = undefined;
        resolve();
      };
    });
  }

  /** Waits until no new question has come for GATHER_MS (at most GATHER_MAX_MS in all), or the call ends. */
  private async gathered(): Promise<void> {
    const until = Date.now() + GATHER_MAX_MS;
    while (this.outcome === undefined && Date.now() < until) {
      const before = this.asked;
      await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
      if (this.asked === before) return;
    }
  }
}
