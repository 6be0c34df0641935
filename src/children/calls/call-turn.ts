// A tools/call's time limit counted from when it arrived: its wait for a turn in its child's line is part of it.
import type { GaggleError } from "../../shared/errors.js";
import type { QueueDepth, Turn } from "../child.js";
import { timerDelay } from "../../shared/timer-delay.js";
import { Cancellation } from "./cancellation.js";

/** One wait in a line: the cancellation to wait with, and what ends the wait once the call is let through. */
export interface Waiting {
  cancel: Cancellation | undefined;
  admitted(): void;
}

const unbounded = (cancel: Cancellation | undefined): Waiting => ({ cancel, admitted: () => {} });

/**
 * Made by the router when a call to a child with a time limit arrives, and handed down to the child with the
 * call. A call whose time runs out while it waits leaves the line with the error `expired` makes and never
 * reaches the child; one that gets its turn has the rest of its time there (`queuedMs` tells the child's wire
 * how much is gone). Starting the child is not waiting: startup_timeout_ms bounds that on its own.
 */
export class CallTurn implements Turn {
  private readonly arrivedAt = performance.now();
  /** How long the call waited for its turn, once it has had it: counted here alone, when the router lets it through. */
  queuedMs: number | undefined;

  constructor(
    readonly timeoutMs: number,
    readonly queue: QueueDepth,
    private readonly expired: (queuedMs: number) => GaggleError,
  ) {}

  /**
   * The call has its turn at the child, its last wait behind it: the time it waited is counted, once. Throws the
   * expired error when the call's time ran out before its first turn: a wait's timer and the turn can come due
   * together, and a call given its turn first must not reach the child either.
   */
  began(): void {
    if (this.queuedMs !== undefined) return;
    const queuedMs = performance.now() - this.arrivedAt;
    if (queuedMs >= this.timeoutMs) throw this.expired(Math.round(queuedMs));
    this.queuedMs = queuedMs;
  }

  /**
   * A wait in a line that follows the caller's `cancel` and, before the call's first turn, also ends with
   * the expired error when its time runs out. Later waits (a call that paused for its client's input, taking
   * its place again) are bounded by the caller alone: its time was counted when it began.
   */
  waiting(cancel: Cancellation | undefined): Waiting {
    if (this.queuedMs !== undefined) return unbounded(cancel);
    const wait = new Cancellation();
    const unfollow = cancel?.onAbort((reason) => wait.abort(reason));
    const left = this.arrivedAt + this.timeoutMs - performance.now();
    const timer = setTimeout(() => wait.abort(this.expired(Math.round(performance.now() - this.arrivedAt))), timerDelay(left));
    const over = () => {
      clearTimeout(timer);
      unfollow?.();
    };
    // A wait that ends without its turn (the caller cancelled it) needs its timer no more than one let through.
    wait.onAbort(over);
    return { cancel: wait, admitted: over };
  }
}

/** Waits in a line with `enter`, bounded as the call's turn says (by the caller alone for a call without a time limit). */
export async function inLine<T>(
  turn: CallTurn | undefined,
  cancel: Cancellation | undefined,
  enter: (cancel: Cancellation | undefined) => Promise<T>,
): Promise<T> {
  const wait = turn ? turn.waiting(cancel) : unbounded(cancel);
  try {
    return await enter(wait.cancel);
  } finally {
    wait.admitted();
  }
}
