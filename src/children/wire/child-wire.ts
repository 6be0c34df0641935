// One child session's wire: the process or HTTP connection underneath, the one table of requests awaiting the child's
// answers with its one timer, and the protocol era the child speaks.
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, JSONRPCRequest, MessageExtraInfo, Progress, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { RequestTable, SENT, type Link, type LinkReceiver } from "../../shared/link.js";
import { OutgoingRequest, plainAnswer } from "../../shared/json-rpc-codec.js";
import { UnparsedResult } from "../../shared/answer-line.js";
import { timerDelay } from "../../shared/timer-delay.js";
import { withResolvers } from "../../shared/with-resolvers.js";
import { cancelledError } from "../calls/cancellation.js";
import { ChildEra, type EraOptions } from "./child-era.js";
import { ForwardedRequest, type Awaited, type ForwardHooks, type ForwardLimits, type ForwardOwner, type RequestLane } from "./forwarded-request.js";

/** What the session that owns a wire hears of its connection (its errors reach the session through the Client's onerror). */
export interface WireEvents {
  /** The connection ended, on purpose or not: told before anything awaiting the child fails. */
  closed(): void;
}

/**
 * The SDK Client keeps the session's own requests (initialize, the lists, subscriptions, logging level) and every
 * request and notification the child sends; it is connected to the wire, which is its transport, with an ordinary
 * connect(). Forwarded requests (tools/call, resources/read, prompts/get, completion/complete) are sent and settled
 * here instead, under ids of their own (`gaggle-N`, so they never meet the Client's numeric ids): they skip the
 * Client's per-message zod parses and per-request bookkeeping, and their results pass on exactly as the child wrote
 * them. Each message the child sends is sorted once, in the order the child sent it, so no progress is lost to a
 * response read in the same chunk: an answer gaggle awaits settles its request; progress for one restarts its
 * timeout; the era's own messages (a late probe answer, the listen streams) go to the era; the rest to the Client.
 */
export class ChildWire implements Transport, LinkReceiver, RequestLane {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  readonly era: ChildEra;
  private readonly pending = new RequestTable<Awaited>();
  private lastId = 0;
  /**
   * One timer for every request awaiting an answer, due at the earliest deadline it knows of. A timer per request
   * costs a timer-list insert and removal on every call; with one timer, sending a request or taking its progress
   * only moves a number. Unref'd: pending requests never keep gaggle alive on their own.
   */
  private timer: NodeJS.Timeout | undefined;
  private timerDueAt = Infinity;
  private ended = false;
  /** Whether a request sent has taken its answer as a line (see receiveLine): until one has, no line is looked at. */
  private linesTaken = false;

  constructor(
    /** The process or the HTTP connection underneath. */
    readonly link: Link,
    era: EraOptions,
    private readonly events: WireEvents,
  ) {
    this.era = new ChildEra(this, era);
  }

  get sessionId(): string | undefined {
    return this.link.sessionId;
  }

  /** Started by the Client's connect(). */
  start(): Promise<void> {
    return this.link.start(this);
  }

  /** What the Client sends, in the era the child speaks. */
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.era.send(message, options);
  }

  close(): Promise<void> {
    this.era.close();
    return this.link.close();
  }

  setProtocolVersion(version: string): void {
    if (!this.era.modern) this.link.setProtocolVersion?.(version);
  }

  /**
   * Sends a request and resolves with the child's result. Fails with an McpError: the child's own error,
   * RequestTimeout (after telling the child with notifications/cancelled), or ConnectionClosed; `cancel`
   * also cancels the request at the child and fails with its reason. `queuedMs`: for a call with a time limit,
   * how much of it the wait for its turn used up. `owner`: told of the request's end, and asked what it fails with.
   */
  forward(
    method: string,
    params: Record<string, unknown>,
    limits: ForwardLimits,
    hooks: ForwardHooks,
    queuedMs?: number,
    owner?: ForwardOwner,
  ): Promise<Record<string, unknown>> {
    const id = `gaggle-${++this.lastId}`;
    const { cancel, onprogress } = hooks;
    if (onprogress) params = { ...params, _meta: { ...(params._meta as Record<string, unknown> | undefined), progressToken: id } };
    const { promise, resolve, reject } = withResolvers<Record<string, unknown>>();
    const request = new ForwardedRequest(id, this, limits, hooks, queuedMs, resolve, reject, owner);
    if (cancel?.aborted) {
      // Never sent: it fails as any request does, and the child is told nothing.
      request.fail(cancelledError(cancel.reason));
      return promise;
    }
    this.await(id, request);
    if (hooks.relaysResult) this.linesTaken = true;
    // Its text written as it is: gaggle's own ids need no escapes.
    const message: JSONRPCRequest = new OutgoingRequest(id, method, params, `"${id}"`);
    let sent: Promise<void>;
    try {
      sent = this.era.modern ? this.era.send(message) : this.link.send(message);
    } catch (error) {
      // A request that cannot be written (params JSON cannot hold) fails as one the link could not send.
      sent = Promise.reject(error);
    }
    if (sent !== SENT) {
      sent.catch((error: unknown) => {
        if (this.pending.get(id) === request) request.fail(error instanceof Error ? error : new Error(String(error)));
      });
    }
    return promise;
  }

  /** Records `awaited` under `id` until the child answers it, its deadline passes, or the connection ends. */
  await(id: RequestId, awaited: Awaited): void {
    this.pending.set(id, awaited);
    // Most requests are due after the timer already set: only a comparison, written here so it runs inlined.
    if (awaited.deadline < this.timerDueAt) this.dueBy(awaited.deadline);
  }

  drop(id: RequestId): void {
    this.pending.delete(id);
  }

  cancelAtChild(requestId: string, reason: string): void {
    void this.link.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason } }).catch(() => {});
  }

  /** Hands the Client a message the era answered itself, as if the child had sent it, on a later turn. */
  deliver(message: JSONRPCMessage): void {
    queueMicrotask(() => this.onmessage?.(message));
  }

  /** Hands the Client a message now. */
  deliverNow(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }

  /**
   * A line the link read, before it is decoded: a plain success answer (plainAnswer) to a request that takes its
   * answer as a line settles it with an UnparsedResult, the line checked as decodeMessage checks it but not parsed
   * (nothing on its way to the client reads more of it than whether it is an error). False for any other line, which
   * the link decodes for receive.
   */
  receiveLine(line: string): boolean {
    if (!this.linesTaken) return false;
    const answer = plainAnswer(line);
    const awaited = answer === undefined ? undefined : this.pending.get(answer.id);
    if (!awaited?.takesLine) return false;
    const { id, isError } = answer!;
    this.pending.delete(id);
    // A result whose other members nothing reads: its type is the caller's, its line what it holds.
    awaited.answered({ jsonrpc: "2.0", id, result: new UnparsedResult(isError) as unknown as Record<string, unknown> }, line);
    return true;
  }

  receive(message: JSONRPCMessage, extra?: MessageExtraInfo, text?: string): void {
    if (!("method" in message)) {
      const id = message.id;
      const awaited = id === undefined || id === null ? undefined : this.pending.get(id);
      if (awaited) {
        this.pending.delete(id!);
        return awaited.answered(message, text);
      }
      if (this.era.takeAnswer(message)) return;
    } else if (message.method === "notifications/progress" && !("id" in message)) {
      const { progressToken, ...progress } = (message.params ?? {}) as Progress & { progressToken?: unknown };
      const awaited = typeof progressToken === "string" ? this.pending.get(progressToken) : undefined;
      if (awaited?.progress) return awaited.progress(progress);
    } else if (!("id" in message) && this.era.takeNotification(message)) {
      return;
    }
    this.onmessage?.(message, extra);
  }

  /** The era probe's own refusals, and the fetch of a request gaggle cancelled, are no faults and go unreported. */
  error(error: Error): void {
    if (this.era.reportable(error)) this.onerror?.(error);
  }

  /**
   * The session hears of the end first, so that what fails next fails with how the child ended; then the Client,
   * then every request still awaiting an answer.
   */
  closed(): void {
    if (this.ended) return;
    this.ended = true;
    this.events.closed();
    this.onclose?.();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueAt = Infinity;
    const awaiting = this.pending.entries();
    this.pending.clear();
    for (const [, awaited] of awaiting) awaited.closed();
  }

  /** Makes sure the timer fires by `deadline`, earlier than it is due. */
  private dueBy(deadline: number): void {
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
    for (const [id, awaited] of this.pending.entries()) {
      if (awaited.deadline > now) next = Math.min(next, awaited.deadline);
      else if (this.pending.get(id) === awaited) {
        this.pending.delete(id);
        awaited.timedOut();
      }
    }
    if (next < this.timerDueAt) this.dueBy(next);
  }
}
