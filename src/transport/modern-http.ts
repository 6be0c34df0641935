// A 2026-07-28 request over Streamable HTTP: its headers checked against its body, its answer as JSON or an SSE stream.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ErrorCode, type JSONRPCMessage, type JSONRPCNotification, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { ClientPrincipal } from "../children/child.js";
import { ClientGone } from "../children/calls/cancellation.js";
import { admit, errorResponse, type ModernServer } from "../gateway/modern/modern-server.js";
import { LEGACY_VERSIONS, META, MODERN_ERRORS, claimsModernEra } from "../shared/modern-protocol.js";
import { WireError } from "../shared/errors.js";
import { dropNotice, isDroppable } from "./client-outbox.js";
import { ClientConnection } from "./client-connection.js";
import type { Link } from "../shared/link.js";
import { isObject } from "../shared/json.js";
import { messageText } from "../shared/json-rpc-codec.js";

/** Requests whose target the Mcp-Name header repeats. */
const NAMED = new Map<string, "name" | "uri">([
  ["tools/call", "name"],
  ["prompts/get", "name"],
  ["resources/read", "uri"],
]);

/**
 * Whether a POST without a session is a modern request: its body claims a 2026-07-28 version in _meta, or its
 * MCP-Protocol-Version header names a version after 2025-11-25. Everything else is for the 2025 sessions.
 */
export function isModernRequest(req: IncomingMessage, body: unknown): boolean {
  if (req.method !== "POST" || req.headers["mcp-session-id"] !== undefined) return false;
  const version = header(req, "mcp-protocol-version");
  return claimsModernEra(body) || (version !== undefined && !LEGACY_VERSIONS.includes(version));
}

export async function serveModernRequest(
  server: ModernServer,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  who: ClientPrincipal,
  /** gateway.max_client_queue_bytes: what the response may hold unread before notifications are dropped. */
  maxQueueBytes: number,
): Promise<void> {
  if (!isObject(body) || body.jsonrpc !== "2.0" || typeof body.method !== "string") {
    return sendJson(res, 400, {
      jsonrpc: "2.0",
      id: null,
      error: { code: ErrorCode.InvalidRequest, message: "the body must be one JSON-RPC request" },
    });
  }
  // A notification: this era defines none from client to server over HTTP (closing a stream cancels).
  if (!("id" in body)) return void res.writeHead(202).end();
  const request = body as unknown as JSONRPCRequest;
  try {
    checkHeaders(req, request);
    admit(request);
  } catch (error) {
    const refusal = errorResponse(request, error);
    return sendJson(res, statusOf(refusal, 400), refusal);
  }
  const response = new ResponseStream(res, acceptsEventStream(req), maxQueueBytes);
  const connection = new ClientConnection(response, { modern: { server, who, every: true } });
  res.once("close", () => {
    if (!res.writableFinished) connection.closed(new ClientGone("the client closed the response stream"));
  });
  if (request.method === "subscriptions/listen") response.open();
  await connection.open();
  connection.receive(request);
}

/**
 * The headers a modern request must carry, checked against its body before anything else (a mismatch is
 * -32020): MCP-Protocol-Version, Mcp-Method, and Mcp-Name for requests that name a tool, prompt or resource.
 */
function checkHeaders(req: IncomingMessage, request: JSONRPCRequest): void {
  const version = header(req, "mcp-protocol-version");
  if (version === undefined) throw mismatch("the MCP-Protocol-Version header is missing");
  const method = header(req, "mcp-method");
  if (method !== request.method) {
    throw mismatch(
      method === undefined
        ? "the Mcp-Method header is missing"
        : `Mcp-Method header ${JSON.stringify(method)} does not match the body's method ${JSON.stringify(request.method)}`,
    );
  }
  const field = NAMED.get(request.method);
  if (field) {
    const name = header(req, "mcp-name");
    const value = isObject(request.params) ? request.params[field] : undefined;
    if (name === undefined) throw mismatch(`the Mcp-Name header is missing; ${request.method} needs it to repeat params.${field}`);
    if (decodeHeaderValue(name) !== value) {
      throw mismatch(`Mcp-Name header ${JSON.stringify(name)} does not match the body's params.${field} ${JSON.stringify(value)}`);
    }
  }
  const meta = isObject(request.params) && isObject(request.params._meta) ? request.params._meta : undefined;
  const claimed = meta?.[META.protocolVersion];
  if (claimed !== undefined && claimed !== version) {
    throw mismatch(`MCP-Protocol-Version header ${JSON.stringify(version)} does not match the body's _meta version ${JSON.stringify(claimed)}`);
  }
}

function mismatch(message: string): WireError {
  return new WireError(MODERN_ERRORS.headerMismatch, `Header mismatch: ${message}`);
}

/** A header's value, trimmed; a value sent several times is refused as missing. */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value.trim() : undefined;
}

/** Values that are not plain ASCII travel as =?base64?...?=. */
function decodeHeaderValue(value: string): string {
  const encoded = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/i.exec(value);
  return encoded ? Buffer.from(encoded[1]!, "base64").toString("utf8") : value;
}

function acceptsEventStream(req: IncomingMessage): boolean {
  return (req.headers.accept ?? "").includes("text/event-stream");
}

/**
 * HTTP statuses this era gives errors: 404 for a method not served, 400 for a request the server will not take
 * (its own codes, and `refused` for any other error raised before the request ran).
 */
function statusOf(message: JSONRPCMessage, refused = 200): number {
  if (!("error" in message)) return 200;
  const code = message.error.code;
  if (code === ErrorCode.MethodNotFound) return 404;
  return Object.values(MODERN_ERRORS).includes(code as never) ? 400 : refused;
}

/**
 * One 2026-07-28 request's link: a plain JSON answer, unless a notification must go before it: then the answer
 * becomes an SSE stream, which the final response ends. A client that accepts no event stream gets the answer
 * without the notifications. While the client leaves `maxBytes` unread, log and progress notifications are
 * dropped, and one warning with their count goes before the next message.
 */
class ResponseStream implements Link {
  private streaming = false;
  private dropped = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly eventStream: boolean,
    private readonly maxBytes: number,
  ) {}

  /** The request comes with the link: there is nothing more to read. */
  async start(): Promise<void> {}

  /** The answer ends the response; anything before it is a notification on its stream. */
  async send(message: JSONRPCMessage): Promise<void> {
    if ("method" in message) this.notify(message as JSONRPCNotification);
    else this.finish(message);
  }

  async close(): Promise<void> {
    if (!this.res.writableEnded) this.res.end();
  }

  open(): void {
    if (this.streaming || !this.eventStream || this.res.writableEnded) return;
    this.streaming = true;
    this.res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" });
    this.res.flushHeaders();
  }

  notify(notification: JSONRPCNotification): void {
    this.open();
    if (!this.streaming || this.res.writableEnded) return;
    if (this.res.writableLength >= this.maxBytes && isDroppable(notification)) return void this.dropped++;
    this.res.write(this.droppedNotice() + event(notification));
  }

  finish(message: JSONRPCMessage): void {
    if (this.res.writableEnded) return;
    if (this.streaming) this.res.end(this.droppedNotice() + event(message));
    else sendJson(this.res, statusOf(message), message);
  }

  /** The event that tells of the notifications dropped since the last one, if any. */
  private droppedNotice(): string {
    if (this.dropped === 0) return "";
    const notice = event(dropNotice(this.dropped));
    this.dropped = 0;
    return notice;
  }
}

/** A child's answer passed on unchanged but for its id is its own text (see keepAnswerLine). */
function event(message: JSONRPCMessage): string {
  return `event: message\ndata: ${messageText(message)}\n\n`;
}

function sendJson(res: ServerResponse, status: number, body: JSONRPCMessage | Record<string, unknown>): void {
  res
    .writeHead(status, { "content-type": "application/json" })
    .end("jsonrpc" in body && "result" in body ? messageText(body as JSONRPCMessage) : JSON.stringify(body));
}
