// Streamable HTTP at /mcp: one gateway session per client, all sharing the same children; GET /healthz for probes.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode, isInitializeRequest, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { memberPrincipal, type MemberIdentity } from "../children/child.js";
import type { Gaggle } from "../gateway/gaggle.js";
import { memberSecretOf } from "../gateway/members.js";
import { ModernServer } from "../gateway/modern/modern-server.js";
import { GatewayRequests } from "../gateway/requests.js";
import { createGatewayServer } from "../gateway/server.js";
import { StartupError } from "../shared/errors.js";
import { lazyLogger } from "../shared/log.js";
import { withStack } from "../shared/log-errors.js";
import { isObject } from "../shared/json.js";
import { decodeBody, decodeErrorLine, MessageDecodeError } from "../shared/json-rpc-codec.js";
import { BodyError, closeAfterAnswer, readBody } from "./http-body.js";
import type { ClientOutbox } from "./client-outbox.js";
import { ClientConnection } from "./client-connection.js";
import { directToolCall } from "./request-stream.js";
import { HttpSessionLink } from "./http-session-link.js";
import { isModernRequest, serveModernRequest } from "./modern-http.js";
import { bracketed, HttpGuard, isLoopback, isWildcard, OpenAnswers, startupProblem } from "./http-guard.js";
import type { AdminRoutes } from "./admin/admin-routes.js";
import { viewerOf } from "./admin/admin-listener.js";
import { ListenerUsage, type LimitRefusal } from "./http-limits.js";

export interface HttpListenOptions {
  host: string;
  port: number;
  /** Principal name -> bearer token: gateway.auth_tokens, and gateway.auth_token or GAGGLE_AUTH_TOKEN as "auth_token". */
  tokens: Record<string, string>;
  /** Serve only /members/<secret>/mcp: the listener gaggle opens for its agents when it serves stdio. */
  membersOnly?: boolean;
  /** The admin paths (status page, /api/status, /metrics, /readyz), served beside /mcp. */
  admin?: AdminRoutes;
}

interface HttpSession {
  transport: StreamableHTTPServerTransport;
  link: HttpSessionLink;
  /** What the session's streams have not delivered yet, bounded; the client's connection sends through it. */
  outbox: ClientOutbox;
  /** When its last request or stream ended (or began, while none has ended yet). */
  lastSeen: number;
  /**
   * Requests still being answered: a session with any is in use, however long they run. The standalone
   * GET stream does not count: a client that vanished can leave it half-open for ever.
   */
  open: number;
  /** The member secret the session was opened with, if any. */
  secret: string | undefined;
  /** Who opened it (the name of the token sent): only they may use it, read its stream or end it. */
  principal: string;
  /** The ids of its requests still being answered (7 and "7" apart, as in JSON-RPC): an answer is routed by id, so each must be unique. */
  answering: Set<RequestId>;
  /** It made a request after initialize: a session that never does (a health check that did not end it) goes sooner. */
  used: boolean;
}

export interface HttpGateway {
  /** Where it listens, e.g. http://127.0.0.1:8080/mcp. */
  readonly url: string;
  readonly port: number;
  /** Where agents on this machine reach it, e.g. http://127.0.0.1:8080 (no path). */
  readonly localBase: string;
  /**
   * Takes these bearer tokens from the next request on (a reload): a session, listen stream or status stream opened
   * with a token no longer taken is ended, and the work its principal started in the built-in children is stopped
   * (see Gaggle.principalGone); a token whose text changes under the same name keeps both. Refused, keeping the tokens in force, when they would leave a listener off
   * loopback without any: answers why then.
   */
  useTokens(tokens: Record<string, string>): string | undefined;
  /** Closes every client session and the listener; the children are the caller's to close. */
  close(): Promise<void>;
}

/**
 * The longest a session that has made no request since initialize is kept (half of session_idle_timeout_ms, at
 * most this): clients that only check a server (a health check that initializes and leaves without DELETE) would
 * otherwise count as connected until the idle timeout.
 */
const UNUSED_SESSION_MS = 60_000;

/** Bound on first use, after the log level is set. */
const log = lazyLogger({ subsystem: "http" });

export async function serveHttp(gaggle: Gaggle, options: HttpListenOptions): Promise<HttpGateway> {
  const settings = gaggle.config.gateway;
  const problem = startupProblem(options);
  if (problem) throw new StartupError(problem);
  const sessions = new Map<string, HttpSession>();
  const modern = new ModernServer(gaggle, new GatewayRequests(gaggle));
  const usage = new ListenerUsage(settings);
  let guard: HttpGuard | undefined;
  const viewers = new OpenAnswers();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = pathOf(req.url);
    if (path === "/healthz" && req.method === "GET") return send(res, 200, { status: "ok" });
    const { admin } = options;
    if (admin?.isOpen(path)) return admin.serve(req, res, path, { principal: "", everything: false });
    // A member's secret in its path is its credential, in place of the bearer token.
    const secret = memberSecretOf(path);
    const checked = guard!.check(req, secret === undefined && (!admin?.handles(path) || admin.needsToken(path)));
    if ("status" in checked) return send(res, checked.status, jsonRpcError(checked.message), checked.challenge);
    const identity = secret === undefined ? undefined : gaggle.members.resolve(secret);
    if (secret !== undefined && !identity) return send(res, 401, jsonRpcError("unknown or revoked member credential"));
    const principal = identity ? memberPrincipal(identity) : checked.principal;
    // A member is let in while the person whose team it works in is: that person's token leaving the config ends it.
    if (identity && !guard!.admits(gaggle.members.rootOf(principal))) return send(res, 401, jsonRpcError("unknown or revoked member credential"));
    const crowded = usage.admitConnection(req.socket, principal);
    if (crowded) return refuse(res, crowded);
    if (admin?.handles(path) && !identity) {
      viewers.add(res, checked.principal);
      return admin.serve(req, res, path, viewerOf(checked.principal, guard!.open));
    }
    if (path !== "/mcp" && !identity) return send(res, 404, jsonRpcError(`no such endpoint ${path}; MCP is served at /mcp`));
    if (options.membersOnly && !identity) return send(res, 404, jsonRpcError("this listener serves gaggle's own agents only"));

    const body = req.method === "POST" ? decodeBody(await readBody(req, settings.maxBodyBytes)) : undefined;
    if (isModernRequest(req, body)) return serveModernRequest(modern, req, res, body, { identity, principal }, settings.maxClientQueueBytes);
    const id = req.headers["mcp-session-id"];
    const existing = typeof id === "string" ? sessions.get(id) : undefined;
    // A session is used through the path it was opened on, with the token it was opened with: a session id alone
    // reaches nothing of another client's.
    if (existing && existing.secret !== secret) return send(res, 404, jsonRpcError("session not found on this path"));
    if (existing && existing.principal !== principal) return send(res, 404, jsonRpcError("session not found for this token"));
    if (existing) {
      // JSON-RPC ids are unique among a client's requests in flight: a second with the same id would take the
      // first one's answer, and leave the first response open for ever.
      const ids = requestIdsOf(body);
      const taken = ids.find((requestId) => existing.answering.has(requestId));
      if (taken !== undefined) {
        const message = `id ${JSON.stringify(taken)} is already in use by a request of this session still being answered; give each request its own id`;
        return send(res, 400, { jsonrpc: "2.0", error: { code: ErrorCode.InvalidRequest, message }, id: taken });
      }
      for (const requestId of ids) existing.answering.add(requestId);
      if (ids.length > 0) existing.used = true;
      existing.lastSeen = Date.now();
      const counted = req.method !== "GET";
      if (counted) existing.open++;
      res.once("close", () => {
        for (const requestId of ids) existing.answering.delete(requestId);
        if (counted) existing.open--;
        existing.lastSeen = Date.now();
      });
      // The streams the request opens, named as ClientOutbox names them: a GET opens the session's own (for messages
      // related to no request), a POST one for each request it carries.
      existing.outbox.carry(res, req.method === "GET" ? [undefined] : ids);
      const call = req.method === "POST" ? directToolCall(req, path, body) : undefined;
      if (call && existing.link.answer(call, res)) return;
      await existing.transport.handleRequest(req, res, body);
      // A cancelled request is never answered, as the spec asks; its response stream is closed instead of being
      // left open until the client gives up on it.
      const cancelled = cancelledRequestId(body);
      if (cancelled !== undefined) existing.link.closeStream(cancelled);
      return;
    }
    if (id !== undefined) return send(res, 404, jsonRpcError("session not found; it expired or was closed: initialize a new one"));
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      const message = "no mcp-session-id header: the first request of a session must be initialize (or, in MCP 2026-07-28, carry its _meta envelope)";
      return send(res, 400, jsonRpcError(message, requestIdOf(body)));
    }
    const admitted = usage.admitSession(principal);
    if ("message" in admitted) return refuse(res, admitted, requestIdOf(body));
    await openSession(secret, identity, principal, admitted.release).handleRequest(req, res, body);
  };

  const openSession = (
    secret: string | undefined,
    identity: MemberIdentity | undefined,
    principal: string,
    release: () => void,
  ): StreamableHTTPServerTransport => {
    const sessionId = randomUUID();
    const link = new HttpSessionLink(sessionId, {
      maxBytes: settings.maxClientQueueBytes,
      session: sessionId,
      onBacklog: (backlogged) => gaggle.hub.clientBacklog(sessionId, backlogged),
    });
    const connection = new ClientConnection(link, { session: createGatewayServer(gaggle, sessionId, { identity, principal }) });
    const { transport, outbox } = link;
    sessions.set(sessionId, { transport, link, outbox, lastSeen: Date.now(), open: 0, secret, principal, answering: new Set(), used: false });
    void connection.ended.then(() => {
      sessions.delete(sessionId);
      release();
      log.info({ session: sessionId, principal }, "client session closed");
    });
    void connection.open();
    log.info({ session: sessionId, principal }, "client session opened");
    return transport;
  };

  const http: HttpServer = createServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: Math.max(settings.requestTimeoutMs, settings.headersTimeoutMs),
      // How often Node looks for connections past those timeouts: often enough that they are held to them.
      connectionsCheckingInterval: Math.min(1000, settings.headersTimeoutMs / 2),
    },
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        // A body that is not JSON-RPC: -32700 or -32600 with what was wrong, as on stdio.
        if (error instanceof MessageDecodeError && !res.headersSent) {
          return void res.writeHead(400, { "content-type": "application/json" }).end(decodeErrorLine(error));
        }
        const status = error instanceof BodyError ? error.status : 500;
        if (status === 500) log.error({ err: withStack(error) }, "request failed");
        if (res.headersSent) return void res.end();
        // The rest of the body is not wanted: the connection closes once the answer is out.
        if (status === 413) closeAfterAnswer(res);
        send(res, status, jsonRpcError((error as Error).message));
      });
    },
  );
  // Past this many connections, new ones are closed as they are accepted.
  http.maxConnections = settings.maxConnections;

  await new Promise<void>((resolve, reject) => {
    http.once("error", (error) => reject(listenFailure(error, options)));
    http.listen(options.port, options.host, () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  guard = new HttpGuard({ ...options, port, allowedHosts: settings.allowedHosts, allowedOrigins: settings.allowedOrigins });

  const unusedMs = Math.min(settings.sessionIdleTimeoutMs / 2, UNUSED_SESSION_MS);
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, session] of sessions) {
      if (session.open > 0 || session.lastSeen >= now - (session.used ? settings.sessionIdleTimeoutMs : unusedMs)) continue;
      log.info({ session: id, used: session.used }, session.used ? "client session idle; closing" : "client session made no request; closing");
      void session.transport.close();
    }
  }, unusedMs / 2).unref();

  const host = bracketed(options.host);
  const localHost = isLoopback(options.host) || isWildcard(options.host) ? "127.0.0.1" : host;
  return {
    url: `http://${host}:${port}/mcp`,
    port,
    localBase: `http://${localHost}:${port}`,
    useTokens: (tokens) => {
      const before = guard!.principals();
      const problem = guard!.useTokens(tokens);
      if (problem !== undefined) return problem;
      // A member's session goes with the token of the person whose team it works in.
      const gone = (principal: string) => !guard!.admits(gaggle.members.rootOf(principal));
      for (const [id, session] of sessions) {
        if (!gone(session.principal)) continue;
        log.info({ session: id, principal: session.principal }, "client session's token is no longer taken; closing");
        void session.transport.close();
      }
      modern.endListensOf((who) => gone(who.principal));
      viewers.end(gone);
      // What a principal let in no more started would run on owned by no one who can reach it.
      for (const principal of before.filter(gone)) void gaggle.principalGone(principal);
      return undefined;
    },
    close: async () => {
      clearInterval(sweep);
      modern.endListens();
      await Promise.allSettled([...sessions.values()].map((session) => session.transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Why the listener could not be opened, and what to do about it; an error that is no user's fault is kept as it is. */
function listenFailure(error: NodeJS.ErrnoException, options: HttpListenOptions): Error {
  const where = `cannot serve HTTP on ${bracketed(options.host)}:${options.port}`;
  switch (error.code) {
    case "EADDRINUSE":
      return new StartupError(`${where}: the port is in use; stop what listens there, or give --http another port (0 picks a free one)`);
    case "EACCES":
      return new StartupError(`${where}: permission denied (ports below 1024 need privileges); give --http a port of 1024 or above`);
    case "EADDRNOTAVAIL":
      return new StartupError(`${where}: ${options.host} is not an address of this machine; give --http one of its addresses, or 127.0.0.1`);
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new StartupError(`${where}: the host name ${options.host} does not resolve; give --http an address of this machine, or 127.0.0.1`);
    default:
      return error;
  }
}

function jsonRpcError(message: string, id: unknown = null) {
  return { jsonrpc: "2.0", error: { code: -32000, message }, id };
}

/** The ids of the requests in a body (one message or a batch); notifications and answers have none that count. */
function requestIdsOf(body: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const message of Array.isArray(body) ? (body as unknown[]) : [body]) {
    if (!isObject(message) || typeof message.method !== "string") continue;
    if (typeof message.id === "string" || typeof message.id === "number") ids.push(message.id);
  }
  return ids;
}

/**
 * A request target that is a plain absolute path: one the URL parser leaves as it is (no query, fragment, escape,
 * dot segment or authority), so it is its own pathname.
 */
const PLAIN_PATH = /^\/(?!\/)[\w/-]*$/;

/** The path of a request's target, as the URL parser reads it against gaggle's origin. */
export function pathOf(url: string | undefined): string {
  if (url !== undefined && PLAIN_PATH.test(url)) return url;
  return new URL(url ?? "/", "http://gaggle").pathname;
}

/** The id of a request the answer is for, when the body is one; an error must carry it. */
function requestIdOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** 503 for a request past a listener limit; its connection closes after the answer, so a refused one frees its descriptor. */
function refuse(res: ServerResponse, refusal: LimitRefusal, id: unknown = null): void {
  res.setHeader("connection", "close");
  res.setHeader("retry-after", "5");
  send(res, 503, jsonRpcError(refusal.message, id));
}

/** `challenge`: a 401's WWW-Authenticate. */
function send(res: ServerResponse, status: number, body: unknown, challenge?: string): void {
  res.writeHead(status, { "content-type": "application/json", ...(challenge && { "www-authenticate": challenge }) }).end(JSON.stringify(body));
}

/** The id a notifications/cancelled names, when `body` is one. */
function cancelledRequestId(body: unknown): RequestId | undefined {
  if (!isObject(body) || body.method !== "notifications/cancelled" || !isObject(body.params)) return undefined;
  const id = body.params.requestId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}
