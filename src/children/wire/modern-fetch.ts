// The 2026-07-28 wire over HTTP, spoken through the SDK's Streamable HTTP client transport, which knows only
// sessions: the headers a modern POST must carry, its JSON-RPC errors read as answers whatever their status, and
// cancellation by closing the request's response stream.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { META } from "../../shared/modern-protocol.js";
import { headerParamsOf, headerValue, paramHeaders } from "./param-headers.js";
import { throughBody } from "./response-body.js";

const NAMED_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

interface SentMessage {
  id?: unknown;
  method?: unknown;
  params?: { name?: unknown; uri?: unknown; arguments?: unknown; requestId?: unknown; _meta?: Record<string, unknown> };
}

/**
 * Why a request's fetch was aborted: the request was cancelled. A cancel before the response arrived fails the
 * fetch with it; a cancel once the response stream was being read ends that stream as a finished one (see
 * modernFetch), so the SDK transport, which would report a failed read as "SSE stream disconnected" and keep
 * nothing of its cause, has nothing to report.
 */
export class CancelledStream extends Error {
  override readonly name = "CancelledStream";
}

/** True when `error` is only the cancel of a request gaggle cancelled itself. */
export function isCancelledStream(error: unknown): boolean {
  return error instanceof CancelledStream;
}

/**
 * fetch for one Streamable HTTP child. A POST whose body carries the envelope is a 2026-07-28 request: it gets
 * the headers that repeat its body's version, method and name (MCP-Protocol-Version, Mcp-Method, Mcp-Name; a
 * value that is not plain ASCII goes base64-encoded in a sentinel), and its answer is read as modern. The
 * era has no session a notifications/cancelled could be matched in, so cancelling such a request closes its
 * response stream instead, as the specification asks. A tools/call also mirrors the parameters the tool's
 * schema marks with `x-mcp-header` (`toolFor` finds the tool as the child listed it). Anything else goes out
 * as it is.
 */
export function modernFetch(toolFor: (name: string) => Tool | undefined = () => undefined): Fetch {
  const inFlight = new Map<unknown, AbortController>();
  return async (url, init) => {
    const body = init?.body;
    if (init?.method !== "POST" || typeof body !== "string") return fetch(url, init);
    // A 2025 session's POSTs go out unread: only a modern request, or the cancellation of one, is parsed.
    const modern = body.includes(META.protocolVersion) || (inFlight.size > 0 && body.includes("notifications/cancelled"));
    if (!modern) return body.startsWith(INITIALIZE) ? fetch(url, { ...init, headers: named(init.headers, "initialize") }) : fetch(url, init);
    const message = JSON.parse(body) as SentMessage;
    if (message.method === "notifications/cancelled" && inFlight.has(message.params?.requestId)) {
      inFlight.get(message.params?.requestId)!.abort(new CancelledStream(`the request ${String(message.params?.requestId)} was cancelled`));
      return new Response(null, { status: 202 });
    }
    const version = message.params?._meta?.[META.protocolVersion];
    if (typeof message.method !== "string" || typeof version !== "string") return fetch(url, init);
    const headers = new Headers(init.headers);
    headers.set("mcp-protocol-version", version);
    headers.set("mcp-method", message.method);
    const name = message.params?.name ?? message.params?.uri;
    if (NAMED_METHODS.has(message.method) && typeof name === "string") headers.set("mcp-name", headerValue(name));
    const tool = message.method === "tools/call" && typeof name === "string" ? toolFor(name) : undefined;
    const mirrored = tool && headerParamsOf(tool);
    if (Array.isArray(mirrored)) for (const [header, value] of paramHeaders(mirrored, message.params?.arguments)) headers.set(header, value);
    if (message.id === undefined) return errorsAsAnswers(await fetch(url, { ...init, headers }));
    const cancel = new AbortController();
    inFlight.set(message.id, cancel);
    const signal = init.signal ? AbortSignal.any([init.signal, cancel.signal]) : cancel.signal;
    try {
      const response = await errorsAsAnswers(await fetch(url, { ...init, headers, signal }));
      return throughBody(response, { done: () => inFlight.delete(message.id), endedByCaller: () => cancel.signal.aborted });
    } catch (error) {
      inFlight.delete(message.id);
      throw error;
    }
  };
}

/**
 * How the SDK writes an initialize request. A 2025 session's initialize may reach a server of 2026-07-28 only (a
 * child of both eras is reached in each, see BothEras), which wants every POST to name its method: it carries
 * Mcp-Method too, which a 2025 server ignores.
 */
const INITIALIZE = '{"method":"initialize"';

function named(given: RequestInit["headers"], method: string): Headers {
  const headers = new Headers(given);
  headers.set("mcp-method", method);
  return headers;
}

/**
 * A 2026-07-28 server answers a request it refuses with an HTTP status that fits the error (404 for an unknown
 * method, 400 for a missing capability) and the JSON-RPC error in the body. There is no session such a status
 * could end, so an error addressed to the request is handed on as the request's answer; the SDK transport
 * would otherwise take a 404 for a lost session and any other status for a failed send.
 */
async function errorsAsAnswers(response: Response): Promise<Response> {
  if (response.ok || !response.headers.get("content-type")?.includes("application/json")) return response;
  const text = await response.text();
  const rebuilt = (status: number) =>
    new Response(text, { status, statusText: status === 200 ? "OK" : response.statusText, headers: response.headers });
  try {
    const answer = JSON.parse(text) as { error?: unknown; id?: unknown };
    const addressed = typeof answer.id === "string" || typeof answer.id === "number";
    return rebuilt(addressed && answer.error !== undefined ? 200 : response.status);
  } catch {
    return rebuilt(response.status);
  }
}
