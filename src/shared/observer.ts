// What the call path tells of each request it serves: a client's request to gaggle and gaggle's requests to a child
// for it. With nothing observing (no admin listener, no traces, no audit log) there is no observer and no work.
import { errorMessage } from "./errors.js";

/** Who sent a request, as its client introduced itself. */
export interface PeerInfo {
  name: string;
  version: string;
}

/** A client's request to gaggle, as it arrives. */
export interface ClientRequest {
  /** The JSON-RPC method, e.g. tools/call. */
  method: string;
  /** The client's session ("stdio", an HTTP session id, or a 2026-07-28 request's own). */
  session: string;
  principal: string;
  /** "pipe" for a client on stdio, "tcp" for one over HTTP. */
  transport: "pipe" | "tcp";
  client: PeerInfo | undefined;
  /** The MCP version the client speaks. */
  protocol: string | undefined;
  /** The name a tools/call or prompts/get gives, as the client wrote it. */
  name?: string | undefined;
  /** The URI a resources/read gives. */
  uri?: string | undefined;
  arguments?: Record<string, unknown> | undefined;
  /** The request's `_meta`: a W3C traceparent there is the parent of gaggle's span. */
  meta?: Record<string, unknown> | undefined;
  /**
   * The request's cancellation: one its client cancelled, or whose client's session ended, ends as CANCELLED with
   * the cancellation's reason, not as a failure (see cancelledOr).
   */
  cancel?: CancelState | undefined;
}

/**
 * How a request ended. `error` is absent for success; otherwise a short class of failure with few values:
 * "tool_error" for a tool's isError result, a gaggle error code (TIMEOUT), or a JSON-RPC error code ("-32602").
 */
export interface Outcome {
  error?: string | undefined;
  /** What went wrong, for a trace; never a label. */
  message?: string | undefined;
  /** The answer, for its size in an audit record (measured only when one is written). */
  answer?: unknown;
}

/** gaggle's request to a child, made for a client's request. */
export interface ChildRequest {
  child: string;
  method: string;
  /** The child's own name of the tool or prompt. */
  name?: string | undefined;
  uri?: string | undefined;
  /** The MCP version the child speaks. */
  protocol: string | undefined;
  /** "pipe" for a child over stdio, "tcp" for one over HTTP. */
  transport: "pipe" | "tcp";
  /** The cancellation of the client's request it serves (see ClientRequest.cancel). */
  cancel?: CancelState | undefined;
}

/** One request to a child, from when it is sent until its answer. */
export interface ChildOperation {
  /** The `_meta` to send the child: `meta` with this request's trace context in place of the client's. */
  meta(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined;
  end(outcome: Outcome): void;
}

/** One client request, from its arrival until its answer. */
export interface ServerOperation {
  /** The child the request reached and its own name of the tool or prompt, once the gateway found them. */
  routed(child: string, name?: string): void;
  /** A request to a child made to serve this one. */
  childRequest(request: ChildRequest): ChildOperation;
  /**
   * The request failed, though its client hears of it as a result (a tool call's isError result): `end` reports
   * this failure rather than "tool_error".
   */
  failed(error: unknown): void;
  end(outcome: Outcome): void;
}

/** A client's session that ended (a 2025-era session; a 2026-07-28 request has none). */
export interface EndedSession {
  durationMs: number;
  transport: "pipe" | "tcp";
}

export interface Observer {
  clientRequest(request: ClientRequest): ServerOperation;
  sessionEnded(session: EndedSession): void;
}

/** The JSON-RPC error codes the specifications define; a child's own codes beyond them count as "_OTHER". */
const KNOWN_CODES = new Set([-32700, -32600, -32601, -32602, -32603, -32000, -32001, -32002, -32042]);

/** A result's outcome: a tool's isError result is "tool_error", as the MCP conventions say. */
export function resultOutcome(result: unknown): Outcome {
  return outcomeOf((result as { isError?: unknown } | null)?.isError === true ? "tool_error" : undefined, undefined, result);
}

/** An Outcome with every member present, in one order: what reads outcomes sees one shape. */
export function outcomeOf(error: string | undefined, message: string | undefined, answer: unknown): Outcome {
  return { error, message, answer };
}

/**
 * What a cancelled request ended in (its client cancelled it, or its client's session ended): no failure of the
 * child, whatever the cancellation made its call throw.
 */
export const CANCELLED = "CANCELLED";

/** What an observer reads of a request's cancellation (a Cancellation is one). */
export interface CancelState {
  readonly aborted: boolean;
  /** Why: what its client said, or that the client's session ended. */
  readonly reason: unknown;
}

/**
 * `outcome`, or CANCELLED for a request that failed once it was cancelled, its client's doing or its session's end,
 * with the cancellation's reason as its message: what the cancellation made its call throw says nothing of the child.
 */
export function cancelledOr(outcome: Outcome, cancel: CancelState | undefined): Outcome {
  return outcome.error !== undefined && outcome.error !== "tool_error" && cancel?.aborted === true
    ? outcomeOf(CANCELLED, cancel.reason === undefined ? outcome.message : errorMessage(cancel.reason), outcome.answer)
    : outcome;
}

/**
 * A failure's outcome: a gaggle error's code, a JSON-RPC error's code as a string (an unknown code as "_OTHER", so
 * that a child cannot grow the set), anything else "_OTHER".
 */
export function failureOutcome(error: unknown): Outcome {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^[A-Z_]{1,40}$/.test(code)) return outcomeOf(code, message, undefined);
  if (typeof code === "number") return outcomeOf(KNOWN_CODES.has(code) ? String(code) : "_OTHER", message, undefined);
  return outcomeOf("_OTHER", message, undefined);
}
