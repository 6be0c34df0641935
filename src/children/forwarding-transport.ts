// A child's transport with a lane of its own for the requests gaggle forwards on a client's behalf.
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  McpError,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { cancelledError, type Cancellation } from "./cancellation.js";

export interface ForwardOptions {
  /** Without a response or progress for this long, the request is cancelled at the child and fails. */
  timeoutMs: number;
  /** Progress restarts the timeout, but never past this long since the request was sent. */
  maxTotalTimeoutMs: number;
  cancel?: Cancellation | undefined;
  onprogress?: (progress: Progress) => void;
}

interface Pending {
  resolve(result: Record<string, unknown>): void;
  fail(error: Error, cancelReason?: string): void;
  progress(progress: Progress): void;
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

  private readonly pending = new Map<string, Pending>();
  private lastId = 0;

  constructor(readonly inner: Transport) {
    inner.onclose = () => {
      this.onclose?.();
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
  forward(method: string, params: Record<string, unknown>, options: ForwardOptions): Promise<Record<string, unknown>> {
    const id = `gaggle-${++this.lastId}`;
    const { timeoutMs, maxTotalTimeoutMs, cancel, onprogress } = options;
    if (onprogress) params = { ...params, _meta: { ...(params._meta as Record<string, unknown> | undefined), progressToken: id } };
    return new Promise((resolve, reject) => {
      if (cancel?.aborted) return reject(cancelledError(cancel.reason));
      const sentAt = Date.now();
      let timer: NodeJS.Timeout | undefined;
      let stopListening: (() => void) | undefined;
      const settle = () => {
        clearTimeout(timer);
        stopListening?.();
        this.pending.delete(id);
      };
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          request.fail(new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: timeoutMs }), "Request timed out");
        }, timeoutMs);
      };
      const request: Pending = {
        resolve: (result) => {
          settle();
          resolve(result);
        },
        fail: (error, cancelReason) => {
          settle();
          if (cancelReason !== undefined) this.cancelAtChild(id, cancelReason);
          reject(error);
        },
        progress: (progress) => {
          const elapsed = Date.now() - sentAt;
          if (elapsed >= maxTotalTimeoutMs) {
            const error = new McpError(ErrorCode.RequestTimeout, "Maximum total timeout exceeded", { maxTotalTimeout: maxTotalTimeoutMs, totalElapsed: elapsed });
            return request.fail(error, "Maximum total timeout exceeded");
          }
          arm();
          onprogress?.(progress);
        },
      };
      this.pending.set(id, request);
      stopListening = cancel?.onAbort((reason) => request.fail(cancelledError(reason), String(reason)));
      arm();
      this.inner.send({ jsonrpc: "2.0", id, method, params }).catch((error: unknown) => {
        if (this.pending.get(id) === request) request.fail(error instanceof Error ? error : new Error(String(error)));
      });
    });
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
    if ("error" in message) request.fail(new McpError(message.error.code, message.error.message, message.error.data));
    else request.resolve(message.result);
    return true;
  }

  private cancelAtChild(requestId: string, reason: string): void {
    void this.inner.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason } }).catch(() => {});
  }
}
