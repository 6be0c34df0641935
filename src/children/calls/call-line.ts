// A child's one admission line: at most `concurrency` of its tools/calls at the child, waiting calls let in in order.
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

/**
 * Strictly in order: a call is let in at once only while nobody waits, and a freed place goes to the calls at
 * the head of the line, as many as fit, so a busy client cannot starve another and no call overtakes one that
 * waits. A call that finds room costs a counter and the function that gives its place back; only a call that
 * must wait makes a promise.
 */
export class CallLine implements QueueDepth {
  private inside = 0;
  /** The client whose calls are inside, for a line that admits one client at a time. */
  private owner: string | undefined;
  private readonly waiters: Waiter[] = [];

  constructor(
    readonly concurrency: number,
    private readonly oneClient: boolean,
  ) {}

  /**
   * Calls holding one of the child's `concurrency` places: those at the child, and those a place is free for that
   * wait only for another client's calls to end. Places go to calls in order of arrival, so they are as many as
   * the calls there are, up to `concurrency`.
   */
  get running(): number {
    return Math.min(this.concurrency, this.inside + this.waiters.length);
  }

  /** Calls waiting for a place. */
  get waiting(): number {
    return this.inside + this.waiters.length - this.running;
  }

  /** Lets the call in now if it may go in now, or returns undefined: then it must wait with `enter`. */
  tryEnter(session: string): Leave | undefined {
    if (this.waiters.length > 0 || !this.fits(session)) return undefined;
    this.take(session);
    return this.leaver();
  }

  /**
   * Resolves once the call may go in; the returned function must be called when it ends. A call cancelled
   * while it waits leaves the line and rejects with the cancellation's reason.
   */
  async enter(session: string, cancel?: Cancellation): Promise<Leave> {
    const now = this.tryEnter(session);
    if (now) return now;
    if (cancel?.aborted) throw cancelledError(cancel.reason);
    await new Promise<void>((admit, reject) => {
      const waiter: Waiter = { session, admit };
      this.waiters.push(waiter);
      const stopListening = cancel?.onAbort((reason) => {
        const at = this.waiters.indexOf(waiter);
        if (at !== -1) this.waiters.splice(at, 1);
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

  private take(session: string): void {
    this.owner = session;
    this.inside++;
  }

  private leaver(): Leave {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inside--;
      if (this.waiters.length > 0) this.admitNext();
    };
  }

  /** The calls at the head of the line that fit go in: the next client, with every call of its right behind it. */
  private admitNext(): void {
    for (let next = this.waiters[0]; next && this.fits(next.session); next = this.waiters[0]) {
      this.waiters.shift();
      this.take(next.session);
      next.admit();
    }
  }
}
