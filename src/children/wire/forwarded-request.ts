// A request gaggle sent a child and awaits the answer to, as the child's wire holds it: its deadline, its progress, its end.
import { ErrorCode, McpError, type JSONRPCMessage, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { cancelledError, type CancelFollower, type Cancellation } from "../calls/cancellation.js";
import { errorMessage } from "../../shared/errors.js";
import { keepAnswerLine } from "../../shared/answer-line.js";
import { ChildErrorAnswer } from "./child-error-answer.js";

/** An answer from the child: a response or an error response. */
export type Answer = Exclude<JSONRPCMessage, { method: string }>;

/** One entry of a wire's table of requests awaiting an answer. */
export interface Awaited {
  /** When it gives up unless answered first (performance.now()'s clock, which never jumps); Infinity for never. */
  readonly deadline: number;
  /**
   * The child answered; the wire has taken the entry out of its table already. `text`: the answer as the child wrote
   * it, when it came as a line of its own.
   */
  answered(answer: Answer, text: string | undefined): void;
  /**
   * True for a request whose caller writes the result to its client as it is, reading at most whether it is an error:
   * a plain success answer then comes as an UnparsedResult (see ChildWire.receiveLine).
   */
  readonly takesLine?: boolean;
  /** Progress the child reported under the request's id as its token; absent when the request asked for none. */
  progress?(progress: Progress): void;
  timedOut(): void;
  /** The connection ended under it. */
  closed(): void;
}

/** The same for every request of one child. */
export interface ForwardLimits {
  /** Without a response or progress for this long, the request is cancelled at the child and fails. */
  timeoutMs: number;
  /** Progress restarts the timeout, but never past this long since the request was sent. */
  maxTotalTimeoutMs: number;
}

/** What one request carries from its caller (a CallContext is one). */
export interface ForwardHooks {
  cancel?: Cancellation | undefined;
  onprogress?: ((progress: Progress) => void) | undefined;
  /** The caller writes the result to its client as it is (see CallContext.relaysResult, Awaited.takesLine). */
  relaysResult?: boolean | undefined;
}

/**
 * The sender of a request that hears of its end directly, rather than by awaiting the promise and wrapping it in one of
 * its own: the promise the wire returns is then the sender's answer as it is.
 */
export interface ForwardOwner {
  /** What the request's promise rejects with, for `error`, the wire's reason. */
  failure(error: Error): Error;
  /** The request settled, whether answered or not: told before its promise settles, and after failure(). */
  settled(): void;
}

/** What a request in flight needs of the wire that sent it. */
export interface RequestLane {
  /** The request has settled: forget it. */
  drop(id: string): void;
  cancelAtChild(id: string, reason: string): void;
}

/** One forwarded request until it settles: a class, not a bundle of closures, since one is made per call. */
export class ForwardedRequest implements Awaited, CancelFollower {
  deadline: number;
  private readonly sentAt = performance.now();

  constructor(
    readonly id: string,
    private readonly lane: RequestLane,
    private readonly limits: ForwardLimits,
    private readonly hooks: ForwardHooks,
    /**
     * For a call with a time limit (see Turn), how long it waited for its turn before it was sent: its limits
     * count from when it arrived, and a timeout says how long it queued and ran.
     */
    private readonly queuedMs: number | undefined,
    private readonly resolve: (result: Record<string, unknown>) => void,
    private readonly reject: (error: Error) => void,
    private readonly owner: ForwardOwner | undefined,
  ) {
    this.deadline = this.sentAt + limits.timeoutMs - (queuedMs ?? 0);
    // One cancelled already is failed by the wire before it is sent: it does not follow, so the child is told nothing.
    if (hooks.cancel && !hooks.cancel.aborted) hooks.cancel.follow(this);
  }

  get takesLine(): boolean {
    return this.hooks.relaysResult === true;
  }

  /** Its caller cancelled it: it fails, and the child is told. */
  cancelled(reason: unknown): void {
    this.fail(cancelledError(reason), errorMessage(reason));
  }

  /** A result that came in a line of its own is kept with it: passed on unchanged, it is written as that line (see keepAnswerLine). */
  answered(answer: Answer, text: string | undefined): void {
    if ("error" in answer) return this.fail(new ChildErrorAnswer(answer.error.code, answer.error.message, answer.error.data));
    this.hooks.cancel?.unfollow(this);
    if (text !== undefined) keepAnswerLine(answer.result, text, this.id);
    this.owner?.settled();
    this.resolve(answer.result);
  }

  /** Progress restarts the timeout, unless the request has run for max_timeout_ms already. */
  progress(progress: Progress): void {
    const now = performance.now();
    const elapsed = now - this.sentAt + (this.queuedMs ?? 0);
    const { timeoutMs, maxTotalTimeoutMs } = this.limits;
    if (elapsed >= maxTotalTimeoutMs) {
      const data = { maxTotalTimeout: maxTotalTimeoutMs, totalElapsed: Math.round(elapsed), ...this.spent(now) };
      return this.fail(new McpError(ErrorCode.RequestTimeout, "Maximum total timeout exceeded", data), "Maximum total timeout exceeded");
    }
    // Only ever later: the wire's timer, due at or before the old deadline, finds the new one when it fires.
    this.deadline = now + timeoutMs;
    this.hooks.onprogress?.(progress);
  }

  timedOut(): void {
    const data = { timeout: this.limits.timeoutMs, ...this.spent(performance.now()) };
    this.fail(new McpError(ErrorCode.RequestTimeout, "Request timed out", data), "Request timed out");
  }

  closed(): void {
    this.fail(new McpError(ErrorCode.ConnectionClosed, "Connection closed"));
  }

  /** With a `cancelReason`, the child is told with notifications/cancelled. */
  fail(error: Error, cancelReason?: string): void {
    const failure = this.owner ? this.owner.failure(error) : error;
    this.settle();
    if (cancelReason !== undefined) this.lane.cancelAtChild(this.id, cancelReason);
    this.owner?.settled();
    this.reject(failure);
  }

  /** For a call that waited its turn: how long it waited, and how long it has run at the child. */
  private spent(now: number): { queued: number; ran: number } | undefined {
    return this.queuedMs === undefined ? undefined : { queued: Math.round(this.queuedMs), ran: Math.round(now - this.sentAt) };
  }

  private settle(): void {
    this.hooks.cancel?.unfollow(this);
    this.lane.drop(this.id);
  }
}
