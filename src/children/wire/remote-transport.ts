// Transports for children reached over the network (Streamable HTTP and the legacy SSE transport), and what their failures mean.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { extractWWWAuthenticateParams, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { fetchFailure } from "../../shared/errors.js";
import { TransportLink, type Link } from "../../shared/link.js";
import { modernFetch } from "./modern-fetch.js";
import { heldFetch, type OutputHold } from "./output-hold.js";
import { refusedGetStream, ssePostStatus, streamDisconnected } from "./sdk-wording.js";
import { refusingWebPages } from "./web-page-answer.js";
import { reaching } from "../oauth/reaching.js";

export interface RemoteOptions {
  /** Go on every request, the SSE stream's GET included (the SDK merges `requestInit`). */
  headers: Record<string, string>;
  /** Finds a tool of the child by name, for the headers a 2026-07-28 tools/call mirrors from its arguments. */
  toolFor: (name: string) => Tool | undefined;
  /** Signs in when the child answers 401 (the MCP authorization spec); its tokens then go on every request. */
  authProvider: RefusalAwareProvider;
  /** Holds the child's answers and streams unread while a client it serves is not reading. */
  hold: OutputHold;
}

/** A provider that is told what the child's own 401 and 403 answers said (the SDK reads them only in part). */
export type RefusalAwareProvider = OAuthClientProvider & {
  /** The access token to send instead of `sent`, the one on the request: newer, or refreshed since it was due. */
  freshAccessToken(sent: string, serverUrl: URL, fetchFn: Fetch): Promise<string | undefined>;
  /** The access token to send again a request refused (401) with `refused`, once refreshed; undefined when there is none. */
  accessTokenAfterRefusal(refused: string, serverUrl: URL, fetchFn: Fetch): Promise<string | undefined>;
  /** Returns an error when the refusal is final: no sign-in would change it, and the request fails with it. */
  noteRefusal(status: number, challenge: { error?: string; scope?: string }): Promise<Error | undefined>;
};

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * `inner`, for requests to the child: an access token about to expire is refreshed before the request goes,
 * and every 401 or 403 the child answers is shown to the provider first. A request refused (401) for its access
 * token goes once more with a refreshed one (the provider's, shared by every request refused with that token), so
 * that the SDK, which would refresh for each refused request on its own, sees only a refusal no refresh cured. The
 * same fetch also carries the SDK's requests to the authorization server, which are left alone: those go to
 * another origin or carry a form (token requests). (An SSE child's POSTs go to a path of its choosing, so the
 * origin is what tells.)
 */
function signedInFetch(inner: Fetch, endpoint: URL, provider: RefusalAwareProvider): Fetch {
  return async (url, init) => {
    const toChild = new URL(url).origin === endpoint.origin && !(init?.body instanceof URLSearchParams);
    // The authorization server's requests: a network failure there names the URL it could not reach.
    if (!toChild) return reaching(inner)(url, init);
    const headers = new Headers(init?.headers);
    const sent = /^Bearer (\S+)$/i.exec(headers.get("authorization") ?? "")?.[1];
    const fresh = sent === undefined ? undefined : await provider.freshAccessToken(sent, endpoint, inner);
    const token = fresh ?? sent;
    if (fresh !== undefined) headers.set("authorization", `Bearer ${fresh}`);
    const response = await refusalNoted(await inner(url, fresh === undefined ? init : { ...init, headers }), provider);
    // A body that is a stream is gone once sent; the SDK's requests carry text.
    const again = init?.body === undefined || init.body === null || typeof init.body === "string";
    if (response.status !== 401 || token === undefined || !again) return response;
    const renewed = await provider.accessTokenAfterRefusal(token, endpoint, inner);
    if (renewed === undefined) return response;
    await response.body?.cancel();
    headers.set("authorization", `Bearer ${renewed}`);
    return refusalNoted(await inner(url, { ...init, headers }), provider);
  };
}

/** Shows the provider a 401 or 403 the child answered; throws the provider's error when the refusal is final. */
async function refusalNoted(response: Response, provider: RefusalAwareProvider): Promise<Response> {
  if (response.status !== 401 && response.status !== 403) return response;
  const { error, scope } = extractWWWAuthenticateParams(response);
  const final = await provider.noteRefusal(response.status, { ...(error && { error }), ...(scope && { scope }) });
  if (final) {
    await response.body?.cancel();
    throw final;
  }
  return response;
}

export function remoteTransport(kind: "http" | "sse", url: string, { headers, toolFor, authProvider, hold }: RemoteOptions): Transport {
  const endpoint = new URL(url);
  const requestInit = { headers };
  const inner = kind === "http" ? modernFetch(toolFor) : fetch;
  const fetchFn = heldFetch(refusingWebPages(signedInFetch(inner, endpoint, authProvider), endpoint), endpoint.origin, hold);
  return kind === "http"
    ? new StreamableHTTPClientTransport(endpoint, { requestInit, authProvider, fetch: fetchFn })
    : new SSEClientTransport(endpoint, { requestInit, authProvider, fetch: fetchFn });
}

/**
 * Ends a Streamable HTTP session as the spec asks a client that no longer needs it to: a DELETE carrying the
 * session id (a server that keeps no sessions answers 405, which is fine). Waits at most `ms`; a server that
 * does not answer by then keeps its session until it times it out. Nothing to do for other transports.
 */
export async function terminateRemoteSession(link: Link, ms: number): Promise<void> {
  const transport = link instanceof TransportLink ? link.transport : undefined;
  if (!(transport instanceof StreamableHTTPClientTransport)) return;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()));
  await Promise.race([transport.terminateSession().catch(() => {}), gaveUp]);
  clearTimeout(timer);
}

/**
 * True when what a remote transport reports means the session is over: a request could not reach the
 * server at all (refused, reset, unresolvable: fetch's own failure), the server no longer knows the session
 * (HTTP 404, as after a restart), or a legacy SSE stream broke (every answer travels on it, and a new
 * stream would be a new session).
 */
export function connectionLost(error: unknown): boolean {
  if (fetchFailure(error)) return true;
  // The standalone GET stream is optional: a server that will not open it (some answer 404 rather than 405)
  // still serves the session's POSTs, and a session it really forgot shows on the next POST.
  if (error instanceof StreamableHTTPError) return error.code === 404 && !refusedGetStream(error);
  if (error instanceof SseError) return true;
  return ssePostStatus(error) === 404;
}

/**
 * True when a request never reached a remote server, so that it ran nowhere and may be sent again: the
 * connection was refused, or the server no longer knew the session (HTTP 404). A reset connection is not
 * such a case: the server may have run the request before it went.
 */
export function neverReached(error: unknown): boolean {
  const failure = fetchFailure(error);
  if (failure) return failure.code === "ECONNREFUSED";
  if (error instanceof StreamableHTTPError) return error.code === 404;
  return ssePostStatus(error) === 404;
}

/** True when a Streamable HTTP response stream broke before it ended. */
export function streamBroken(error: unknown): boolean {
  return streamDisconnected(error);
}
