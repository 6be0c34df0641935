// A call's cancellation: a flag and a list of listeners, with a real AbortSignal made only when one is asked for.

import type { CancelState } from "../../shared/observer.js";

type AbortListener = (reason: unknown) => void;

/** What follows a cancellation as an object of its own, with no closure made for it: one made per call does. */
export interface CancelFollower {
  cancelled(reason: unknown): void;
}

type Follower = AbortListener | CancelFollower;

const nothingToRemove = () => {};

/**
 * Node's AbortSignal is an EventTarget: making one and adding and removing a listener costs several
 * microseconds, more than all the rest of gaggle's bookkeeping for a forwarded call. Nearly every call ends
 * without being cancelled, so a call carries this instead, and the parts that need an AbortSignal (a call
 * waiting in a queue, an API that takes one) get it from `signal`, which follows the cancellation.
 */
export class Cancellation {
  private cancelled: { reason: unknown } | undefined;
  /**
   * The listeners in the order they were added: a call nearly always has one, held in `first` without a list; `first`
   * is taken only while `more` is empty, so that it is always the oldest.
   */
  private first: Follower | undefined;
  private more: Follower[] | undefined;
  private controller: AbortController | undefined;

  /**
   * @param source the signal of a request the SDK's Protocol answers: its abort cancels this. The Protocol aborts it
   * with the client's reason for notifications/cancelled, and with none when the connection closes: then `ended`,
   * the connection's own cancellation (aborted just before the Protocol hears of the close), gives the reason.
   */
  constructor(source?: AbortSignal, ended?: CancelState) {
    if (!source) return;
    const reason = () => (ended?.aborted ? ended.reason : source.reason);
    if (source.aborted) this.cancelled = { reason: reason() };
    else source.addEventListener("abort", () => this.abort(reason()), { once: true });
  }

  get aborted(): boolean {
    return this.cancelled !== undefined;
  }

  get reason(): unknown {
    return this.cancelled?.reason;
  }

  /** The first call cancels: each listener runs once, in the order it was added. Later calls do nothing. */
  abort(reason: unknown): void {
    if (this.cancelled) return;
    this.cancelled = { reason };
    const { first, more } = this;
    this.first = undefined;
    this.more = undefined;
    this.controller?.abort(reason);
    if (first) tell(first, reason);
    if (more) for (const follower of more) tell(follower, reason);
  }

  /** Runs `listener` once when the call is cancelled, at once if it already is; returns what removes it. */
  onAbort(listener: AbortListener): () => void {
    if (this.cancelled) {
      listener(this.cancelled.reason);
      return nothingToRemove;
    }
    this.follow(listener);
    return () => this.unfollow(listener);
  }

  /** Tells `follower` once when the call is cancelled, at once if it already is, in the order followers came. */
  follow(follower: Follower): void {
    if (this.cancelled) return tell(follower, this.cancelled.reason);
    if (this.first === undefined && !this.more?.length) this.first = follower;
    else (this.more ??= []).push(follower);
  }

  /** `follower` is told nothing more; one that does not follow is no matter. */
  unfollow(follower: Follower): void {
    if (this.first === follower) {
      this.first = undefined;
      return;
    }
    const at = this.more?.indexOf(follower) ?? -1;
    if (at !== -1) this.more!.splice(at, 1);
  }

  /** An AbortSignal that is aborted with this cancellation, with its reason; made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort(this.cancelled.reason);
    }
    return this.controller.signal;
  }
}

function tell(follower: Follower, reason: unknown): void {
  if (typeof follower === "function") follower(reason);
  else follower.cancelled(reason);
}

/** `work`'s value, or undefined as soon as `signal` aborts (the work goes on, its failure handled where it began). */
export async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return undefined;
  let onAbort = (): void => {};
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** What work fails with when its caller gave up on it: the reason itself if it is an Error. */
export function cancelledError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(`cancelled by the caller: ${String(reason)}`);
}

/**
 * Why a request was cancelled when its client went away (its session ended, its response stream closed). Its text is
 * the reason alone, also where it is turned into a string as a whole (the SDK's notifications/cancelled does so).
 */
export class ClientGone extends Error {
  override readonly name = "ClientGone";

  override toString(): string {
    return this.message;
  }
}
