// A child's transport with a lane of its own for the requests gaggle forwards on a client's behalf.
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, type JSONRPCMessage, type MessageExtraInfo, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { timerDelay } from "../shared/timer-delay.js";
import { cancelledError, type Cancellation } from "./cancellation.js";
import { ChildErrorAnswer } from "./child-error-answer.js";

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
  /** Set for a call that waited its turn first (see CallTurn): the time it waited is gone from its limits. */
  turn?: { readonly queuedMs: number | undefined } | undefined;
}

/** What a request in flight needs of the transport that forwarded it. */
interface RequestLane {
  /** The request has settled: forget it. */
  drop(id: string): void;
  cancelAtChild(id: string, reason: string): void;
}

/** One forwarded request until it settles: a class, not a bundle of closures, since one is made per call. */
class ForwardedRequest {
  /** When the request times out unless progress comes first (on performance.now()'s clock, which never jumps). */
  deadline: number;
  private readonly sentAt = performance.now();
  /** How long the call waited for its turn before it was sent: its limits count from when it arrived. */
  private readonly queuedMs: number;
  private stopListening: (() => void) | undefined;

  constructor(
    readonly id: string,
    private readonly lane: RequestLane,
    private readonly limits: ForwardLimits,
    private readonly hooks: ForwardHooks,
    private readonly resolve: (result: Record<string, unknown>) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.queuedMs = hooks.turn?.queuedMs ?? 0;
    this.deadline = this.sentAt + limits.timeoutMs - this.queuedMs;
    if (hooks.cancel) this.stopListening = hooks.cancel.onAbort((reason) => this.fail(cancelledError(reason), String(reason)));
  }

  succeed(result: Record<string, unknown>): void {
    this.settle();
    this.resolve(result);
  }

  /** With a `cancelReason`, the child is told with notifications/cancelled. */
  fail(error: Error, cancelReason?: string): void {
    this.settle();
    if (cancelReason !== undefined) this.lane.cancelAtChild(this.id, cancelReason);
    this.reject(error);
  }

  /** Progress restarts the timeout, unless the request has run for max_timeout_ms already. */
  progress(progress: Progress): void {
    const now = performance.now();
    const elapsed = now - this.sentAt + this.queuedMs;
    const { timeoutMs, maxTotalTimeoutMs } = this.limits;
    if (elapsed >= maxTotalTimeoutMs) {
      const data = { maxTotalTimeout: maxTotalTimeoutMs, totalElapsed: Math.round(elapsed), ...this.spent(now) };
      return this.fail(new McpError(ErrorCode.RequestTimeout, "Maximum total timeout exceeded", data), "Maximum total timeout exceeded");
    }
    // Only ever later: the transport's timer, due at or before the old deadline, finds the new one when it fires.
    this.deadline = now + timeoutMs;
    this.hooks.onprogress?.(progress);
  }

  timeOut(): void {
    const data = { timeout: this.limits.timeoutMs, ...this.spent(performance.now()) };
    this.fail(new McpError(ErrorCode.RequestTimeout, "Request timed out", data), "Request timed out");
  }

  /** For a call that waited its turn: how long it waited, and how long it has run at the child. */
  private spent(now: number): { queued: number; ran: number } | undefined {
    return this.hooks.turn ? { queued: Math.round(this.queuedMs), ran: Math.round(now - this.sentAt) } : undefined;
  }

  private settle(): void {
    this.stopListening?.();
    this.lane.drop(this.id);
  }
}

/**
 * The SDK Client keeps the session's own requests (initialize, the lists, subscriptions, logging level) and
 * every request and notification the child sends. Forwarded requests (tools/call, resources/read, prompts/get,
 * completion/complete) are sent and settled here instead, under ids of their own (`gaggle-N`, so they never
 * meet the Client's numeric ids): they skip the Client's per-message zod parses and per-request bookkeeping, and
 * their results pass on exactly as the child wrote them. A request's progress and its response are handled
 * in the order the child sent them, so no progress is lost to a response read in the same chunk.
 */
export class ForwardingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private readonly pending = new Map<string, ForwardedRequest>();
  private lastId = 0;
  /**
   * One timer for all requests in flight, due at the earliest deadline it knows of. A timer per request
   * costs a timer-list insert and removal on every call; with one timer, sending a request or taking its
   * progress only moves a number. Unref'd: pending requests never keep gaggle alive on their own.
   */
  private timer: NodeJS.Timeout | undefined;
  private timerDueAt = Infinity;
  private readonly lane: RequestLane = {
    drop: (id) => this.pending.delete(id),
    cancelAtChild: (id, reason) => this.cancelAtChild(id, reason),
  };

  constructor(readonly inner: Transport) {
    inner.onclose = () => {
      this.onclose?.();
      clearTimeout(this.timer);
      this.timer = undefined;
      this.timerDueAt = Infinity;
      const closed = new McpError(ErrorCode.ConnectionClosed, "Connection closed");
      for (const request of [...this.pending.values()]) request.fail(closed);
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      if (!this.settles(message)) this.onmessage?.(message, extra);
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  /**
   * Sends a request and resolves with the child's result. Fails with an McpError: the child's own error,
   * RequestTimeout (after telling the child with notifications/cancelled), or ConnectionClosed; `cancel`
   * also cancels the request at the child and fails with its reason.
   */
  forward(method: string, params: Record<string, unknown>, limits: ForwardLimits, hooks: ForwardHooks): Promise<Record<string, unknown>> {
    const id = `gaggle-${++this.lastId}`;
    const { cancel, onprogress } = hooks;
    if (onprogress) params = { ...params, _meta: { ...(params._meta as Record<string, unknown> | undefined), progressToken: id } };
    return new Promise((resolve, reject) => {
      if (cancel?.aborted) return reject(cancelledError(cancel.reason));
      const request = new ForwardedRequest(id, this.lane, limits, hooks, resolve, reject);
      this.pending.set(id, request);
      this.dueBy(request.deadline);
      this.inner.send({ jsonrpc: "2.0", id, method, params }).catch((error: unknown) => {
        if (this.pending.get(id) === request) request.fail(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }

  /** Makes sure the timer fires by `deadline`. */
  private dueBy(deadline: number): void {
    if (deadline >= this.timerDueAt) return;
    clearTimeout(this.timer);
    this.timerDueAt = deadline;
    // A deadline past setTimeout's range is reached in steps: sweep() sets the timer again for what is left.
    this.timer = setTimeout(() => this.sweep(), timerDelay(deadline - performance.now())).unref();
  }

  /** Times out every request past its deadline, then sets the timer for the earliest one left. */
  private sweep(): void {
    this.timer = undefined;
    this.timerDueAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const request of [...this.pending.values()]) {
      if (request.deadline <= now) request.timeOut();
      else next = Math.min(next, request.deadline);
    }
    if (next !== Infinity) this.dueBy(next);
  }

  /** Takes a message that answers or reports on a forwarded request; true if it was one. */
  private settles(message: JSONRPCMessage): boolean {
    if ("method" in message) {
      if (message.method !== "notifications/progress") return false;
      const { progressToken, ...progress } = (message.params ?? {}) as Progress & { progressToken?: unknown };
      const request = typeof progressToken === "string" ? this.pending.get(progressToken) : undefined;
      request?.progress(progress);
      return request !== undefined;
    }
    const request = typeof message.id === "string" ? this.pending.get(message.id) : undefined;
    if (!request) return false;
    if ("error" in message) request.fail(new ChildErrorAnswer(message.error.code, message.error.message, message.error.data));
    else request.succeed(message.result);
    return true;
  }

  private cancelAtChild(requestId: string, reason: string): void {
    void this.inner.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason } }).catch(() => {});
  }
}
