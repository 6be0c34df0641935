// Which client a child's own requests go to, and the schema that passes a client's answer to them through untouched.
import { z } from "zod";
import type { Caller } from "../child.js";

/** Any JSON object: what a client answered to a request a child made. */
export const AnyResultSchema = z.looseObject({});

/**
 * The clients behind a child's calls in flight, oldest first, and the last client that used it. A child's
 * request goes to the client whose call it is serving; the protocol does not say which call a request
 * belongs to, so with several clients' calls in flight at once the oldest call's client gets it.
 */
export class CallerTracker {
  /** Each call's Caller (one object per call), with how many of its requests are in flight, oldest first. */
  private readonly inFlight = new Map<Caller, number>();
  private last: Caller | undefined;

  /** Records a call in flight; `end` with the same caller ends it. */
  begin(caller: Caller | undefined): void {
    if (!caller) return;
    this.inFlight.set(caller, (this.inFlight.get(caller) ?? 0) + 1);
    this.last = caller;
  }

  end(caller: Caller | undefined): void {
    if (!caller) return;
    const count = this.inFlight.get(caller) ?? 0;
    if (count > 1) this.inFlight.set(caller, count - 1);
    else this.inFlight.delete(caller);
  }

  /** Distinct clients with calls in flight. */
  active(): Caller[] {
    const bySession = new Map<string, Caller>();
    for (const caller of this.inFlight.keys()) if (!bySession.has(caller.sessionId)) bySession.set(caller.sessionId, caller);
    return [...bySession.values()];
  }

  /** Whether a call in flight is from a client whose session `test` picks. */
  serves(test: (sessionId: string) => boolean): boolean {
    for (const caller of this.inFlight.keys()) if (test(caller.sessionId)) return true;
    return false;
  }

  /**
   * Where a child's request goes: the oldest call in flight whose client can be asked now, else the oldest call
   * in flight, else the last client that used the child, else nowhere. A paused call's child is waiting for the
   * answers to its own questions, so a new question is most likely another call's.
   */
  target(): Caller | undefined {
    let oldest: Caller | undefined;
    for (const caller of this.inFlight.keys()) {
      if (!caller.paused) return caller;
      oldest ??= caller;
    }
    return oldest ?? this.last;
  }

  forget(sessionId: string): void {
    if (this.last?.sessionId === sessionId) this.last = undefined;
  }
}
