// What to do about a remote child that could not be reached or was refused, told from the error's fields (the
// system or TLS error code fetch hides under "fetch failed", the HTTP status the SDK's transport errors carry):
// the same advice for a failed call as for `gaggle doctor`.
import type { ChildConfig } from "../../config/index.js";
import { GaggleError } from "../../shared/errors.js";

const UNREACHABLE = new Set(["ETIMEDOUT", "ECONNRESET", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

/** TLS failures by their codes: OpenSSL's certificate checks (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, ...) and Node's. */
function isTlsCode(code: string): boolean {
  return code.includes("CERT") || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code === "HOSTNAME_MISMATCH" || code === "INVALID_CA";
}

/** The error and its causes, as far down as they go (a few levels at most). */
function* causes(error: unknown): Generator<Error> {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) yield at;
}

/** The first system or TLS error code, and the first HTTP status, the error or its causes carry. */
function causeCodes(error: unknown): { code: string | undefined; status: number | undefined } {
  let code: string | undefined;
  let status: number | undefined;
  for (const at of causes(error)) {
    const own = (at as { code?: unknown }).code;
    // gaggle's own codes (SERVER_FAILED) say what kind of failure it is, not what failed underneath.
    if (typeof own === "string" && !(at instanceof GaggleError)) code ??= own;
    if (typeof own === "number" && own >= 400 && own < 600) status ??= own;
  }
  return { code, status };
}

/** What to check or do about a remote child (`config.url`) whose start failed with `error`. */
export function remoteAdvice(config: ChildConfig, error: unknown): string {
  const { code, status } = causeCodes(error);
  const url = new URL(config.url!);
  const key = `mcp_servers.${config.name}`;
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
