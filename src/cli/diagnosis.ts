// Why a child did not start, in a person's words, and what to do about it: the cause behind the error (a command
// not on PATH, a host that does not resolve, a port nobody listens on, a refused certificate, a sign-in, a start
// past its time limit, stdout lines that are not JSON-RPC) rather than the error's own wording.
import type { ChildStatus } from "../children/child.js";
import { StartFailure } from "../children/calls/call-failure.js";
import { slowStartAdvice } from "../children/calls/slow-start.js";
import { errorChain, GaggleError, refusedPort } from "../shared/errors.js";
import type { ChildConfig } from "../config/index.js";

export interface Diagnosis {
  reason: string;
  advice: string[];
}

export function diagnose(config: ChildConfig, error: unknown, status: ChildStatus): Diagnosis {
  const reason = plainReason(config.name, error instanceof GaggleError ? error.message : errorChain(error));
  const key = `mcp_servers.${config.name}`;
  if (error instanceof GaggleError && error.code === "AUTH_REQUIRED") {
    return { reason, advice: [`run: gaggle auth login ${config.name}`] };
  }
  if (error instanceof StartFailure && error.timedOutAfterMs !== undefined) {
    return { reason, advice: [...noiseAdvice(status), ...slowStartAdvice(config, error.timedOutAfterMs), ...stderrAdvice(status.stderrTail)] };
  }
  if (config.transport !== "stdio") return badPort(config, error) ?? { reason, advice: networkAdvice(config, causeCodes(error)) };
  return { reason, advice: [...noiseAdvice(status), `check ${key}.command, args and env`, ...stderrAdvice(status.stderrTail)] };
}

/**
 * Lines on stdout that are not JSON-RPC, from a child that then failed: often the cause itself (a command that
 * prints its usage, a banner, or is no MCP server at all), so named first, with the first line still kept.
 */
function noiseAdvice({ stdoutNoise }: ChildStatus): string[] {
  const [first] = stdoutNoise.recent;
  if (first === undefined) return [];
  return [
    `it wrote ${stdoutNoise.lines} line(s) to stdout that are not JSON-RPC, such as ${JSON.stringify(first.line)}: ` +
      "stdout is the MCP channel, so check that the command runs an MCP server over stdio and that it logs to stderr",
  ];
}

/** TLS failures by their codes: OpenSSL's certificate checks (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, ...) and Node's. */
function isTlsCode(code: string): boolean {
  return code.includes("CERT") || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code === "HOSTNAME_MISMATCH" || code === "INVALID_CA";
}

/** A port fetch refuses to reach: named, with why and what to do. */
function badPort(config: ChildConfig, error: unknown): Diagnosis | undefined {
  const reason = refusedPort(error, config.url!);
  return reason === undefined ? undefined : { reason, advice: [`serve the child on another port, and change it in mcp_servers.${config.name}.url`] };
}

const UNREACHABLE = new Set(["ETIMEDOUT", "ECONNRESET", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

/**
 * What the error and its causes say in fields: the system or TLS error code (fetch hides it under "fetch failed")
 * and the HTTP status (the SDK's transport errors carry it as a numeric code).
 */
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

/** The error and its causes, as far down as they go (a few levels at most). */
function* causes(error: unknown): Generator<Error> {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) yield at;
}

function networkAdvice(config: ChildConfig, { code, status }: { code: string | undefined; status: number | undefined }): string[] {
  const url = new URL(config.url!);
  const key = `mcp_servers.${config.name}`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return [`the host ${url.hostname} does not resolve (DNS): check ${key}.url, or the network`];
  if (code === "ECONNREFUSED") return [`nothing listens at ${url.host}: start the server, or check the port in ${key}.url`];
  if (code !== undefined && UNREACHABLE.has(code)) return [`${url.host} cannot be reached from here: check the network, a proxy or a firewall`];
  if (code !== undefined && isTlsCode(code)) {
    return [`the TLS certificate of ${url.host} was refused: check the url's host name, or trust its issuer (NODE_EXTRA_CA_CERTS)`];
  }
  if (status === 401) return [`the server refused gaggle (401): check ${key}.headers (a token?), or add an [${key}.oauth] table`];
  if (status === 403) return [`the server refused gaggle (403): the credentials in ${key}.headers are not allowed this`];
  if (status === 404) return [`no MCP endpoint at ${url.href}: check the path (often /mcp, or /sse for the legacy transport)`];
  return [`check ${key}.url and headers, and that the server is up`];
}

/**
 * A line that names why a process gave up: an error or exception statement (`Error: Cannot find module ...`,
 * `ModuleNotFoundError: ...`, `panic: ...`), not a frame of its stack.
 */
const CAUSE_LINE = /^\s*(?!at\s)(?:[\w.$]*(?:Error|Exception)\b|error\b|fatal\b|panic\b)/i;

/**
 * What the child's stderr says of why it gave up: the last line naming the cause, which a stack trace after it
 * would push out of a tail; else its last lines. One line, however many times the child was started and said it.
 */
export function stderrAdvice(stderrTail: string[]): string[] {
  const lines = stderrTail.filter((line) => line.trim() !== "");
  const cause = lines.findLast((line) => CAUSE_LINE.test(line));
  if (cause) return [`its stderr says: ${cause.trim()}`];
  const tail = lines.slice(-5);
  return tail.length > 0 ? [`its stderr ended with:\n${tail.map((line) => `      ${line}`).join("\n")}`] : [];
}

/**
 * The error's first line, without the child's name in front (the report names it), fetch's "fetch failed" (the
 * cause after it says what failed) or the stderr it appends.
 */
function plainReason(name: string, message: string): string {
  const [first = message] = message.split("\n");
  return first
    .replace(`${name} failed to start: `, "")
    .replace(/^fetch failed: /, "")
    .replace(/; last stderr lines:$/, "");
}
