// Who may talk to the HTTP endpoint, and who they are: bearer tokens (each naming a principal), Host and Origin
// allowlists (against DNS rebinding).
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { LOCAL_PRINCIPAL } from "../children/child.js";

export interface GuardOptions {
  /** The address the listener is bound to, and its port. */
  host: string;
  port: number;
  /**
   * Principal name -> its bearer token (gateway.auth_tokens, and gateway.auth_token as "auth_token"); empty: none
   * required. Replaced as the config in force changes them (see useTokens).
   */
  tokens: Record<string, string>;
  allowedHosts: string[];
  allowedOrigins: string[];
}

export interface Refusal {
  status: number;
  message: string;
  /** For a 401: the WWW-Authenticate challenge the answer carries (RFC 6750: the scheme, and why a token sent failed). */
  challenge?: string;
}

/** Loopback names as they appear in a Host header (an IPv6 address in brackets). */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** An address that listens on every interface. */
export function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]";
}

/** A listen address as it appears in a URL or Host header: IPv6 in brackets. */
export function bracketed(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** A listener on anything but loopback without a token would hand every child to the network: refused at start-up. */
export function startupProblem(options: Pick<GuardOptions, "host" | "tokens">): string | undefined {
  if (isLoopback(options.host) || Object.keys(options.tokens).length > 0) return undefined;
  return `refusing to serve HTTP on ${options.host} without a bearer token: set gateway.auth_token (or gateway.auth_tokens) in the config or GAGGLE_AUTH_TOKEN in the environment, or bind to 127.0.0.1`;
}

export class HttpGuard {
  private readonly host: string;
  private readonly hosts: Set<string>;
  private readonly origins: Set<string>;
  /** Made once per set of tokens taken, not per request: every request but the open paths is checked against them. */
  private tokens: Array<{ principal: string; token: Buffer }> = [];

  /** Bound to every address with no names configured: any Host is accepted, and the required token guards. */
  private readonly anyHost: boolean;

  constructor(options: GuardOptions) {
    const { port } = options;
    this.host = options.host;
    this.anyHost = isWildcard(options.host) && options.allowedHosts.length === 0;
    const names = [...LOOPBACK_NAMES, bracketed(options.host)];
    this.hosts = new Set([...names.map((name) => `${name}:${port}`), ...options.allowedHosts.map((host) => host.toLowerCase())]);
    this.origins = new Set([
      ...names.flatMap((name) => [`http://${name}:${port}`, `https://${name}:${port}`]),
      ...options.allowedOrigins.map((origin) => origin.toLowerCase()),
    ]);
    this.useTokens(options.tokens);
  }

  /**
   * Takes these tokens from the next request on, in place of the ones it took. Refused, keeping those, when they would
   * leave a listener off loopback without any (see startupProblem): answers why then.
   */
  useTokens(tokens: Record<string, string>): string | undefined {
    const problem = startupProblem({ host: this.host, tokens });
    if (problem) return problem;
    this.tokens = Object.entries(tokens).map(([principal, token]) => ({ principal, token: Buffer.from(token) }));
    return undefined;
  }

  /** No token is required: the listener serves one person (LOCAL_PRINCIPAL), who sees everything. */
  get open(): boolean {
    return this.tokens.length === 0;
  }

  /** Every principal it lets in: each token's name, or LOCAL_PRINCIPAL when no token is required. */
  principals(): string[] {
    return this.open ? [LOCAL_PRINCIPAL] : this.tokens.map((entry) => entry.principal);
  }

  /** Whether a client let in as `principal` still would be: its token is still taken, or it came in when none was needed and none is. */
  admits(principal: string): boolean {
    return this.open ? principal === LOCAL_PRINCIPAL : this.tokens.some((entry) => entry.principal === principal);
  }

  /**
   * Host and Origin are checked on every request; the token on every request but the health check and a
   * member's (whose secret is its credential). Answers who the client is: the name of the token it sent, or
   * LOCAL_PRINCIPAL when no token is required.
   */
  check(req: IncomingMessage, needsToken: boolean): Refusal | { principal: string } {
    const host = req.headers.host?.toLowerCase();
    if (!this.anyHost && (!host || !this.hosts.has(host))) {
      return { status: 421, message: `Host header ${JSON.stringify(host ?? "")} is not allowed; add it to gateway.allowed_hosts to serve that name` };
    }
    const origin = req.headers.origin?.toLowerCase();
    if (origin !== undefined && !this.origins.has(origin)) {
      return { status: 403, message: `Origin ${JSON.stringify(origin)} is not allowed; add it to gateway.allowed_origins to accept it` };
    }
    if (!needsToken || this.tokens.length === 0) return { principal: LOCAL_PRINCIPAL };
    const { authorization } = req.headers;
    const principal = this.principalOf(authorization);
    if (principal === undefined) {
      return {
        status: 401,
        message: "missing or wrong bearer token (send Authorization: Bearer <token>)",
        challenge: authorization === undefined ? 'Bearer realm="gaggle"' : 'Bearer realm="gaggle", error="invalid_token"',
      };
    }
    return { principal };
  }

  /** The scheme name is case-insensitive (RFC 7235); every token is compared, each in constant time. */
  private principalOf(header: string | undefined): string | undefined {
    const match = header && /^bearer +(.+)$/i.exec(header);
    if (!match) return undefined;
    const given = Buffer.from(match[1]!);
    let found: string | undefined;
    for (const { principal, token } of this.tokens) {
      if (given.length === token.length && timingSafeEqual(given, token)) found ??= principal;
    }
    return found;
  }
}

/** Answers still being written (status streams), each with the principal let in for it: ended when its token is gone. */
export class OpenAnswers {
  private readonly open = new Map<ServerResponse, string>();

  add(res: ServerResponse, principal: string): void {
    this.open.set(res, principal);
    res.once("close", () => this.open.delete(res));
  }

  /** Ends every answer whose principal is `gone`. */
  end(gone: (principal: string) => boolean): void {
    for (const [res, principal] of this.open) if (gone(principal)) res.destroy();
  }
}
