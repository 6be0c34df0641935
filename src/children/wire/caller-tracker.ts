// Which client a child's own requests go to, and the schema that passes a client's answer to them through untouched.
import { z } from "zod";
import type { Caller } from "../child.js";

/** Any JSON object: what a client answered to a request a child made. */
export const AnyResultSchema = z.looseObject({});

/** One call in flight at a child, from `begin` to `end`: its caller, let go of at the end. */
export interface CallInFlight {
  caller: Caller | undefined;
}

/** How many ended calls may wait at the front of the list before it is compacted. */
const COMPACT_AT = 32;

/**
 * The clients behind a child's calls in flight, oldest first, and the last client that used it. A child's
 * request goes to the client whose call it is serving; the protocol does not say which call a request
 * belongs to, so with several clients' calls in flight at once the oldest call's client gets it.
 *
 * The calls are a list in the order they began, not a Map by caller: each call has a Caller of its own, so such a Map
 * would take and let go of a key every call, and a Map that does replaces its table every few dozen calls, each table
 * it leaves keeping the next alive once one has reached the old generation (see RequestTable), with the callers in it
 * and all they hold.
 */
export class CallerTracker {
  /** From `head` on, the calls in flight in the order they began; a call that ended is cleared where it is. */
  private readonly calls: CallInFlight[] = [];
  private head = 0;
  private last: Caller | undefined;

  /** Records a call in flight; `end` with what it answers ends it. */
  begin(caller: Caller | undefined): CallInFlight | undefined {
    if (!caller) return undefined;
    const call = { caller };
    this.calls.push(call);
    this.last = caller;
    return call;
  }

  end(call: CallInFlight | undefined): void {
    if (!call) return;
    call.caller = undefined;
    const { calls } = this;
    while (this.head < calls.length && calls[this.head]!.caller === undefined) this.head++;
    if (this.head >= COMPACT_AT && this.head * 2 >= calls.length) {
      // The ended calls at the front go once they are half the list: a call in flight is moved a bounded number of times.
      calls.copyWithin(0, this.head);
      calls.length -= this.head;
      this.head = 0;
    }
  }

  /** Distinct clients with calls in flight. */
  active(): Caller[] {
    const bySession = new Map<string, Caller>();
    for (const caller of this.callers()) if (!bySession.has(caller.sessionId)) bySession.set(caller.sessionId, caller);
    return [...bySession.values()];
  }

  /** Whether a call in flight is from a client whose session `test` picks. */
  serves(test: (sessionId: string) => boolean): boolean {
    for (const caller of this.callers()) if (test(caller.sessionId)) return true;
    return false;
  }

  /**
   * Where a child's request goes: the oldest call in flight whose client can be asked now, else the oldest call
   * in flight, else the last client that used the child, else nowhere. A paused call's child is waiting for the
   * answers to its own questions, so a new question is most likely another call's.
   */
  target(): Caller | undefined {
    let oldest: Caller | undefined;
    for (const caller of this.callers()) {
      if (!caller.paused) return caller;
      oldest ??= caller;
    }
    return oldest ?? this.last;
  }

  /** The callers of the calls in flight, oldest first. */
  private *callers(): Generator<Caller> {
    const { calls } = this;
    for (let at = this.head; at < calls.length; at++) {
      const { caller } = calls[at]!;
      if (caller) yield caller;
    }
  }

  forget(sessionId: string): void {
    if (this.last?.sessionId === sessionId) this.last = undefined;
  }
}
