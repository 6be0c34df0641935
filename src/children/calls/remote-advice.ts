// What to do about a remote child that could not be reached or was refused, told from the error's fields (the
// system or TLS error code fetch hides under "fetch failed", the HTTP status the SDK's transport errors carry,
// the media type of a web page answered in MCP's place): the same advice for a failed call as for `gaggle doctor`.
import type { ChildConfig } from "../../config/index.js";
import { GaggleError } from "../../shared/errors.js";
import { NoSignInOffered } from "../oauth/no-sign-in.js";

const UNREACHABLE = new Set(["ETIMEDOUT", "ECONNRESET", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

/** TLS failures by their codes: OpenSSL's certificate checks (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, ...) and Node's. */
function isTlsCode(code: string): boolean {
  return code.includes("CERT") || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code === "HOSTNAME_MISMATCH" || code === "INVALID_CA";
}

/** The error and its causes, as far down as they go (a few levels at most). */
function* causes(error: unknown): Generator<Error> {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) yield at;
}

interface CauseCodes {
  /** A system or TLS error code. */
  code: string | undefined;
  /** An HTTP error status. */
  status: number | undefined;
  /** The media type of a web page the url answered with (see WebPageAnswer). */
  page: string | undefined;
  /** The server refused gaggle and offers no sign-in. */
  noSignIn: boolean;
}

/** The first of each kind of code the error or its causes carry. */
function causeCodes(error: unknown): CauseCodes {
  const found: CauseCodes = { code: undefined, status: undefined, page: undefined, noSignIn: false };
  for (const at of causes(error)) {
    const { code, mediaType } = at as { code?: unknown; mediaType?: unknown };
    // gaggle's own codes (SERVER_FAILED) say what kind of failure it is, not what failed underneath.
    if (typeof code === "string" && !(at instanceof GaggleError)) found.code ??= code;
    if (typeof code === "number" && code >= 400 && code < 600) found.status ??= code;
    if (typeof mediaType === "string") found.page ??= mediaType;
    if (at instanceof NoSignInOffered) found.noSignIn = true;
  }
  return found;
}

/** What to check or do about a remote child (`config.url`) whose start failed with `error`. */
export function remoteAdvice(config: ChildConfig, error: unknown): string {
  const { code, status, page, noSignIn } = causeCodes(error);
  const url = new URL(config.url!);
  const key = `mcp_servers.${config.name}`;
  if (page !== undefined) {
    return `${url.href} serves a web page (${page}), not an MCP endpoint: check the path in ${key}.url (often /mcp)`;
  }
  if (noSignIn) return noSignInAdvice(config, key);
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `the host ${url.hostname} does not resolve (DNS): check ${key}.url, or the network`;
  if (code === "ECONNREFUSED") return `nothing listens at ${url.host}: start the server, or check the port in ${key}.url`;
  if (code !== undefined && UNREACHABLE.has(code)) return `${url.host} cannot be reached from here: check the network, a proxy or a firewall`;
  if (code !== undefined && isTlsCode(code)) {
    return `the TLS certificate of ${url.host} was refused: check the url's host name, or trust its issuer (NODE_EXTRA_CA_CERTS)`;
  }
  if (status === 401) return `the server refused gaggle (401): check ${key}.headers (a token?), or add an [${key}.oauth] table`;
  if (status === 403) return `the server refused gaggle (403): the credentials in ${key}.headers are not allowed this`;
  if (status === 404) return `no MCP endpoint at ${url.href}: check the path (often /mcp, or /sse for the legacy transport)`;
  return `check ${key}.url and headers, and that the server is up`;
}

/**
 * A server that refuses gaggle without offering a sign-in wants credentials given in the config: a header on
 * every request (`headers`), usually a bearer token. With headers set already, they are what it refused.
 */
function noSignInAdvice(config: ChildConfig, key: string): string {
  const refused = "the server refused gaggle (401) and offers no OAuth sign-in";
  if (Object.keys(config.headers).length > 0) {
    return `${refused}: the credentials in ${key}.headers were not accepted; check the token they carry, and that it is still valid`;
  }
  return `${refused}, so it needs credentials gaggle cannot get by signing in: give them in ${key}.headers, e.g. Authorization = "Bearer \${TOKEN}"`;
}
