// One client's connection, in either protocol era: each message its link decoded is sorted here, once, to the part that answers it.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { TaskRequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { AnySchema, SchemaOutput } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { Cancellation, ClientGone } from "../children/calls/cancellation.js";
import type { ClientPrincipal } from "../children/child.js";
import type { CallExtra } from "../gateway/client-session.js";
import type { ModernServer } from "../gateway/modern/modern-server.js";
import type { GatewayServer } from "../gateway/server.js";
import { toolCallParams } from "../gateway/tool-handlers.js";
import { errorReply } from "../gateway/wire-errors.js";
import { claimsModernEra } from "../shared/modern-protocol.js";
import { RequestTable, SENT, type Link, type LinkReceiver } from "../shared/link.js";

/** What answers the requests of a connection, besides its 2025 session's SDK Server. */
export interface ConnectionParts {
  /** The 2025 session the connection carries (none for a 2026-07-28 HTTP request). */
  session?: GatewayServer;
  /**
   * Answers 2026-07-28 requests, and server/discover, how a modern client probes; with `every`, each request of
   * the connection (a 2026-07-28 HTTP request), otherwise those whose _meta claims the era (stdio).
   */
  modern?: { server: ModernServer; who: ClientPrincipal; every: boolean };
}

/**
 * Sorts each message once: notifications/cancelled for a request answered here aborts it (one in-flight table); a
 * request whose _meta claims the 2026-07-28 era, or server/discover, goes to the ModernServer; a tools/call to the
 * gateway's requests, without the SDK; everything else to the 2025 session's SDK Server, connected to this
 * connection through an ordinary connect() (see SessionFace).
 *
 * tools/call is a gateway's hot path, and the SDK's Protocol spends more on one than the rest of gaggle: it parses
 * each message with several zod schemas to learn its kind, and keeps per-request bookkeeping for features gaggle
 * does not use on calls (tasks, related-task queues). A tools/call here has the contract the Protocol gives a
 * handler: a cancellation that notifications/cancelled and the end of the connection abort (its AbortSignal made
 * only when asked for), no reply once it is cancelled, messages sent as related to the call (over Streamable HTTP
 * they travel on its own stream), and a thrown error answered as the JSON-RPC error toWireError makes of it. That
 * the SDK's Server is content to send messages related to a request it never saw, and to answer the rest of the
 * session while it never sees tools/call, is pinned by test/transport/client-connection.test.ts.
 */
export class ClientConnection implements LinkReceiver {
  /** The requests answered here rather than by the SDK's Protocol, by id: each one's cancellation. */
  private readonly inFlight = new RequestTable<Cancellation>();
  private readonly face: SessionFace;
  private ending: ((reason: Error) => void) | undefined;
  /** Settles once the connection has closed. */
  readonly ended: Promise<Error>;

  constructor(
    private readonly link: Link,
    private readonly parts: ConnectionParts,
  ) {
    this.face = new SessionFace(link, this);
    this.ended = new Promise((resolve) => (this.ending = resolve));
  }

  /** Connects the session's server (which starts the link), or starts the link; messages are taken from then on. */
  async open(): Promise<void> {
    if (this.parts.session) await this.parts.session.server.connect(this.face);
    else await this.link.start(this);
  }

  receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ("method" in message) {
      if ("id" in message) {
        const { modern, session } = this.parts;
        session?.requested(message.method);
        if (modern && (modern.every || message.method === "server/discover" || claimsModernEra(message))) return void this.answerModern(message);
        if (session && message.method === "tools/call") return this.callTool(session, message);
      } else if (message.method === "notifications/cancelled" && this.cancelledBy(message.params)) {
        return;
      }
    }
    this.face.onmessage?.(message, extra);
  }

  error(error: Error): void {
    this.face.onerror?.(error);
  }

  /**
   * Every request in flight is cancelled with `reason`, which its child is told and its record keeps: a call whose
   * client went away is no failure of the child's. Those answered here first; then the session, which cancels those
   * its SDK Server answers with the same reason, and leaves the gateway; then the server learns of the close.
   */
  closed(reason: Error = new ClientGone("the client's session ended")): void {
    const ending = this.ending;
    if (!ending) return;
    this.ending = undefined;
    for (const [, cancel] of this.inFlight.entries()) cancel.abort(reason);
    this.inFlight.clear();
    this.parts.session?.closed(reason);
    this.face.onclose?.();
    ending(reason);
  }

  /** Ends the connection from gaggle's side. */
  close(): Promise<void> {
    return this.link.close();
  }

  /** A failure of the call itself is answered as the session says (callFailed); one before it started is a JSON-RPC error. */
  private callTool(session: GatewayServer, request: JSONRPCRequest): void {
    const { id } = request;
    const cancel = this.begin(id);
    let result: Promise<CallToolResult>;
    let name: string | undefined;
    try {
      const params = toolCallParams(request.params);
      result = session.callTool(params, new ToolCallExtra(session.server, id, cancel));
      name = params.name;
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (value) => this.reply(id, cancel, value),
      (error: unknown) => (name === undefined ? this.reply(id, cancel, undefined, error) : this.replyFailed(session, name, id, cancel, error)),
    );
  }

  private replyFailed(session: GatewayServer, name: string, id: RequestId, cancel: Cancellation, error: unknown): void {
    let answer: CallToolResult;
    try {
      answer = session.callFailed(name, error);
    } catch (refusal) {
      return this.reply(id, cancel, undefined, refusal);
    }
    this.reply(id, cancel, answer);
  }

  /**
   * Answers with the result, or else with the error. A reply that cannot be made or sent (a link that throws, a
   * result JSON cannot hold) is reported and that call goes unanswered; it never becomes an unhandled rejection that
   * would stop gaggle.
   */
  private reply(id: RequestId, cancel: Cancellation, result: CallToolResult | undefined, error?: unknown): void {
    this.end(id, cancel);
    if (cancel.aborted) return;
    try {
      const sent = this.link.send(result ? { jsonrpc: "2.0", id, result } : errorReply(id, error));
      if (sent !== SENT) sent.catch((error: unknown) => this.unsent(error));
    } catch (error) {
      this.unsent(error);
    }
  }

  private unsent(error: unknown): void {
    this.error(new Error(`Failed to send a tools/call reply: ${String(error)}`));
  }

  private async answerModern(request: JSONRPCRequest): Promise<void> {
    const { server, who } = this.parts.modern!;
    const cancel = this.begin(request.id);
    const unsent = (error: unknown) => this.error(new Error(`could not send to the client: ${String(error)}`));
    try {
      const answer = await server.handle(request, { ...who, cancel, notify: (notification) => void this.link.send(notification).catch(unsent) });
      if (answer) await this.link.send(answer).catch(unsent);
    } finally {
      this.end(request.id, cancel);
    }
  }

  /** Records a request answered here; notifications/cancelled for it, or the connection's end, aborts its cancellation. */
  private begin(id: RequestId): Cancellation {
    const cancel = new Cancellation();
    this.inFlight.set(id, cancel);
    return cancel;
  }

  /** The request is answered (a later request may reuse its id: only this one's entry is removed). */
  private end(id: RequestId, cancel: Cancellation): void {
    if (this.inFlight.get(id) === cancel) this.inFlight.delete(id);
  }

  /** Aborts the request a notifications/cancelled names, if it is answered here; true if it was. */
  private cancelledBy(params: unknown): boolean {
    const { requestId, reason } = (params ?? {}) as { requestId?: RequestId; reason?: unknown };
    const cancel = requestId === undefined ? undefined : this.inFlight.get(requestId);
    if (!cancel) return false;
    this.inFlight.delete(requestId!);
    cancel.abort(reason);
    return true;
  }
}

/**
 * The transport the 2025 session's SDK Server is connected to, with an ordinary connect(): the SDK sets its
 * callbacks, as it does on any transport; what the server sends goes out on the link, and the connection hands it
 * every message it does not answer itself.
 */
class SessionFace implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  constructor(
    private readonly link: Link,
    private readonly connection: ClientConnection,
  ) {}

  get sessionId(): string | undefined {
    return this.link.sessionId;
  }

  start(): Promise<void> {
    return this.link.start(this.connection);
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.link.send(message, options);
  }

  close(): Promise<void> {
    return this.link.close();
  }
}

/**
 * What a tools/call handler gets besides its params, as the Protocol gives it to other handlers: messages it
 * sends are related to the call, and none is sent once the call is cancelled. A class, since one is made per call.
 */
class ToolCallExtra implements CallExtra {
  /** The connection writes the call's result to its client as it is, reading nothing in it (see reply). */
  readonly relaysResult = true;

  constructor(
    private readonly server: Server,
    private readonly requestId: RequestId,
    readonly cancel: Cancellation,
  ) {}

  get signal(): AbortSignal {
    return this.cancel.signal;
  }

  async sendNotification(notification: ServerNotification): Promise<void> {
    if (!this.cancel.aborted) await this.server.notification(notification, { relatedRequestId: this.requestId });
  }

  async sendRequest<T extends AnySchema>(request: ServerRequest, resultSchema: T, options?: TaskRequestOptions): Promise<SchemaOutput<T>> {
    if (this.cancel.aborted) throw new McpError(ErrorCode.ConnectionClosed, "Request was cancelled");
    return this.server.request(request, resultSchema, { ...options, relatedRequestId: this.requestId });
  }
}
