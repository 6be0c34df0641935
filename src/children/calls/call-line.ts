// A child's one admission line: at most `concurrency` of its tools/calls at the child, waiting calls let in in turn.
//
// A real child's sampling, elicitation and roots requests and its log messages carry nothing that names the
// call they belong to. While every call in flight at such a child comes from one client, they can only be that
// client's, so routing them is exact: a line made with `oneClient` lets calls of one client run together at
// the child, but never calls of two clients at once. Calls without a client session (one-shot commands) are
// one client.

import { cancelledError, type Cancellation } from "./cancellation.js";
import type { QueueDepth } from "../child.js";

/** Gives a call's place in the line back; calling it again does nothing. */
export type Leave = () => void;

interface Waiter {
  session: string;
  admit: () => void;
}

/** One principal's waiting calls, oldest first. */
interface Turns {
  principal: string;
  waiters: Waiter[];
}

/**
 * Takes turns between principals: a freed place goes to the oldest waiting call of the principal whose turn it
 * is, and each principal with waiting calls has its turn in a round, so one principal's flood of calls holds
 * another's call back by at most one of its own. Within one principal the line is strictly in order: a call is
 * let in at once only while nobody waits, and a freed place goes to the calls at the head of the line, as many
 * as fit, so no call overtakes one that waits. A call that finds room costs a counter and the function that
 * gives its place back; only a call that must wait makes a promise.
 */
export class CallLine implements QueueDepth {
  private inside = 0;
  /** The client whose calls are inside, for a line that admits one client at a time. */
  private owner: string | undefined;
  /** The principal of the call let in last: it had the latest turn, so a principal waiting beside it goes first. */
  private latest: string | undefined;
  /** Calls waiting, of every principal. */
  private queued = 0;
  /** The principals with waiting calls, in turn: the one whose turn is next first (a Map keeps insertion order). */
  private readonly turns = new Map<string, Turns>();

  constructor(
    readonly concurrency: number,
    private readonly oneClient: boolean,
  ) {}

  /**
   * Calls holding one of the child's `concurrency` places: those at the child, and those a place is free for that
   * wait only for another client's calls to end. Places go to calls in turn, so they are as many as the calls
   * there are, up to `concurrency`.
   */
  get running(): number {
    return Math.min(this.concurrency, this.inside + this.queued);
  }

  /** Calls waiting for a place. */
  get waiting(): number {
    return this.inside + this.queued - this.running;
  }

  /** Lets the call in now if it may go in now, or returns undefined: then it must wait with `enter`. */
  tryEnter(session: string, principal: string): Leave | undefined {
    if (this.queued > 0 || !this.fits(session)) return undefined;
    this.take(session, principal);
    return this.leaver();
  }

  /**
   * Resolves once the call may go in; the returned function must be called when it ends. A call cancelled
   * while it waits leaves the line and rejects with the cancellation's reason.
   */
  async enter(session: string, principal: string, cancel?: Cancellation): Promise<Leave> {
    const now = this.tryEnter(session, principal);
    if (now) return now;
    if (cancel?.aborted) throw cancelledError(cancel.reason);
    await new Promise<void>((admit, reject) => {
      const waiter: Waiter = { session, admit };
      this.wait(principal, waiter);
      const stopListening = cancel?.onAbort((reason) => {
        this.drop(principal, waiter);
        reject(cancelledError(reason));
        // The call that left may have been all that held up the ones behind it.
        this.admitNext();
      });
      waiter.admit = () => {
        stopListening?.();
        admit();
      };
    });
    return this.leaver();
  }

  private fits(session: string): boolean {
    return this.inside < this.concurrency && (!this.oneClient || this.inside === 0 || this.owner === session);
  }

  private take(session: string, principal: string): void {
    this.owner = session;
    this.latest = principal;
    this.inside++;
  }

  private leaver(): Leave {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inside--;
      if (this.queued > 0) this.admitNext();
    };
  }

  /** A principal that starts waiting has its turn after those already waiting. */
  private wait(principal: string, waiter: Waiter): void {
    const turns = this.turns.get(principal);
    if (turns) turns.waiters.push(waiter);
    else this.turns.set(principal, { principal, waiters: [waiter] });
    this.queued++;
  }

  /** Takes a waiting call out of the line, and its principal out of the round once it has no call waiting. */
  private drop(principal: string, waiter: Waiter): void {
    const turns = this.turns.get(principal);
    const at = turns ? turns.waiters.indexOf(waiter) : -1;
    if (at === -1) return;
    turns!.waiters.splice(at, 1);
    if (turns!.waiters.length === 0) this.turns.delete(principal);
    this.queued--;
  }

  /**
   * The principal whose turn it is: the first of the round, unless it had the latest turn (a call of its let in
   * at once, while nobody waited) and another principal waits too; then it goes to the back of the round.
   */
  private whoseTurn(): Turns | undefined {
    const first = this.turns.values().next().value;
    if (first === undefined || first.principal !== this.latest || this.turns.size === 1) return first;
    this.turns.delete(first.principal);
    this.turns.set(first.principal, first);
    return this.turns.values().next().value;
  }

  /**
   * The calls that fit go in, each the oldest of the principal whose turn it is, until the next one does not
   * fit; a principal that had its turn and still has calls waiting goes to the back of the round.
   */
  private admitNext(): void {
    for (let turns = this.whoseTurn(); turns && this.fits(turns.waiters[0]!.session); turns = this.whoseTurn()) {
      const next = turns.waiters.shift()!;
      this.queued--;
      if (turns.waiters.length === 0) this.turns.delete(turns.principal);
      else if (this.turns.size > 1) {
        this.turns.delete(turns.principal);
        this.turns.set(turns.principal, turns);
      }
      this.take(next.session, turns.principal);
      next.admit();
    }
  }
}
