// A 2025 session's POST of one tools/call, answered on its own SSE stream without the SDK's Streamable HTTP server
// transport: the same status, headers and events the SDK writes for it, and everything else left to the SDK.
import type { IncomingMessage, ServerResponse } from "node:http";
import { SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type JSONRPCRequest, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { messageText } from "../shared/json-rpc-codec.js";
import { RequestTable } from "../shared/link.js";

/** How often an open stream gets an SSE comment, as the SDK's transport keeps its streams from idle timeouts. */
const KEEP_ALIVE_MS = 15_000;

/**
 * A Host the Node adapter under the SDK's transport (@hono/node-server) takes as it is, without parsing it as a URL;
 * any other it parses, and refuses one whose parsed host name is not the Host (see hostAccepted).
 */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;

/**
 * Whether the adapter accepts `host` as a request's Host: plain, or one whose parsed host name is the Host itself or
 * the Host without its port, lower-cased (a port from 60000 up, an upper-case name). Some names the guard lets through
 * when gaggle is bound to every address and names no hosts are refused there; those requests go to the SDK.
 */
function hostAccepted(host: string): boolean {
  if (PLAIN_HOST.test(host)) return true;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}/`).hostname;
  } catch {
    return false;
  }
  return hostname.length === host.length || hostname === host.replace(/:\d+$/, "").toLowerCase();
}

/**
 * The tools/call `body` is, when its POST is one the SDK's transport would answer on an SSE stream of its own with
 * no check left to fail: sent to `path` itself (no query, nothing the URL parser rewrites) with a Host the adapter accepts, an
 * Accept of JSON and SSE, a JSON body (a content type of exactly application/json), a protocol version header absent
 * or one the SDK supports. The session's id, its token, Host and Origin are checked by the caller; the message itself
 * was checked by decodeBody as the SDK reads it. Anything else (another method, a batch, a header the SDK may refuse)
 * goes to the SDK, which answers it as it does.
 */
export function directToolCall(req: IncomingMessage, path: string, body: JSONRPCMessage | JSONRPCMessage[] | undefined): JSONRPCRequest | undefined {
  if (body === undefined || Array.isArray(body) || !("method" in body) || body.method !== "tools/call" || !("id" in body)) return undefined;
  if (req.url !== path || !hostAccepted(req.headers.host ?? "")) return undefined;
  const { accept, "content-type": type, "mcp-protocol-version": version } = req.headers;
  if (accept === undefined || !accept.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  if (type?.toLowerCase() !== "application/json" || sentMoreThanOnce(req, "content-type")) return undefined;
  if (version !== undefined && (typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  return body;
}

/** Whether the request carries header `name` (lower case) more than once: Node keeps the first, the SDK reads them all. */
function sentMoreThanOnce(req: IncomingMessage, name: string): boolean {
  const { rawHeaders } = req;
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i]!;
    if (raw.length === name.length && raw.toLowerCase() === name && ++seen > 1) return true;
  }
  return false;
}

/**
 * One request's SSE stream, as the SDK's transport and @hono/node-server write it: each message an `event: message`
 * chunk, the stream ended after the request's answer, an SSE comment every KEEP_ALIVE_MS while it is open. The head
 * (its headers in the order a web Headers object lists them) goes out once the turn that made the request is over:
 * a stream finished by then (an answer gaggle makes at once, such as an unknown tool's error) is sent whole with a
 * content-length, as the SDK sends a stream finished before it first reads it; any other is chunked, its head sent
 * then. test/transport/http-direct-call.test.ts compares both with the SDK's bytes.
 */
export class RequestStream {
  /** The events written before the head went out; none once it has. */
  private early: string[] | undefined = [];
  private keepAlive: NodeJS.Timeout | undefined;
  /** No more events: answered, cancelled, or its session closed. */
  private finished = false;
  /** The client went away. */
  private gone = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly sessionId: string,
  ) {
    res.once("close", () => {
      this.gone = true;
      this.end();
    });
    setImmediate(() => this.head());
  }

  /** The stream's client went away, or it ended: messages for it are dropped, and an answer refused as the SDK refuses it. */
  get closed(): boolean {
    return this.finished;
  }

  /** Writes a message related to the request; its answer ends the stream. */
  write(message: JSONRPCMessage, answer: boolean): void {
    const event = `event: message\ndata: ${messageText(message)}\n\n`;
    if (this.early) this.early.push(event);
    else this.res.write(event);
    if (answer) this.end();
  }

  /** Ends the stream (answered, cancelled, or the session closed). */
  end(): void {
    if (this.finished) return;
    this.finished = true;
    clearInterval(this.keepAlive);
    if (!this.early) this.res.end();
  }

  private head(): void {
    const early = this.early!;
    this.early = undefined;
    if (this.gone) return;
    const headers: Record<string, string | number> = {
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "content-type": "text/event-stream",
      "mcp-session-id": this.sessionId,
      "x-accel-buffering": "no",
    };
    if (this.finished) {
      const body = early.join("");
      headers["content-length"] = Buffer.byteLength(body);
      this.res.writeHead(200, headers).end(body);
      return;
    }
    this.res.writeHead(200, headers);
    if (early.length === 0) this.res.flushHeaders();
    for (const event of early) this.res.write(event);
    this.keepAlive = setInterval(() => this.res.write(": keepalive\n\n"), KEEP_ALIVE_MS).unref();
  }
}

/**
 * A session's requests answered on RequestStreams: the messages for each (its answer, and what is sent related to
 * it) are written there rather than handed to the SDK's transport.
 */
export class RequestStreams {
  /** A table, not a Map: a stream is opened and closed a request (see RequestTable). */
  private readonly streams = new RequestTable<RequestStream>();

  open(id: RequestId, res: ServerResponse, sessionId: string): void {
    this.streams.set(id, new RequestStream(res, sessionId));
  }

  /**
   * Writes `message` if it belongs to a request here, and says so; an answer for one whose client went away is
   * refused with the error the SDK's transport throws.
   */
  write(message: JSONRPCMessage, relatedRequestId: RequestId | undefined): boolean {
    const answer = "result" in message || "error" in message;
    const id = answer ? message.id : relatedRequestId;
    const stream = id === undefined || id === null ? undefined : this.streams.get(id);
    if (!stream) return false;
    if (answer) this.streams.delete(id!);
    if (!stream.closed) stream.write(message, answer);
    else if (answer) throw new Error(`No connection established for request ID: ${String(id)}`);
    return true;
  }

  /** Ends a request's stream, as the SDK's closeSSEStream does: it is answered no more. */
  close(id: RequestId): void {
    this.streams.get(id)?.end();
  }

  /** The session closed: every stream ends. */
  closeAll(): void {
    for (const [, stream] of this.streams.entries()) stream.end();
    this.streams.clear();
  }
}
