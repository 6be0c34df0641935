// Why a child did not start, in a person's words, and what to do about it: the cause behind the error (a command
// not on PATH, a host that does not resolve, a port nobody listens on, a refused certificate, a sign-in, a start
// past its time limit) rather than the error's own wording.
import type { ChildStatus } from "../children/child.js";
import { STDOUT_GARBAGE_MARK } from "../children/child-session.js";
import { StartFailure } from "../children/call-failure.js";
import { slowStartAdvice, START_TIMEOUT_MARK } from "../children/slow-start.js";
import { errorChain, GaggleError } from "../shared/errors.js";
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
  const timedOutAfterMs = error instanceof StartFailure ? error.timedOutAfterMs : startTimeoutInText(config, reason);
  if (timedOutAfterMs !== undefined) {
    return { reason, advice: [...slowStartAdvice(config, timedOutAfterMs), ...stderrAdvice(status)] };
  }
  if (config.transport !== "stdio") return { reason, advice: networkAdvice(config, reason) };
  return { reason, advice: [`check ${key}.command, args and env`, ...stderrAdvice(status)] };
}

/** An error that did not come from a start gaggle made (a message passed on as text) says it ran out of time only in words. */
function startTimeoutInText(config: ChildConfig, reason: string): number | undefined {
  return reason.includes(START_TIMEOUT_MARK) ? config.startupTimeoutMs : undefined;
}

function networkAdvice(config: ChildConfig, reason: string): string[] {
  const url = new URL(config.url!);
  const key = `mcp_servers.${config.name}`;
  if (/\bENOTFOUND\b|\bEAI_AGAIN\b/.test(reason)) return [`the host ${url.hostname} does not resolve (DNS): check ${key}.url, or the network`];
  if (/\bECONNREFUSED\b/.test(reason)) return [`nothing listens at ${url.host}: start the server, or check the port in ${key}.url`];
  if (/\bETIMEDOUT\b|\bECONNRESET\b|\bEHOSTUNREACH\b|\bENETUNREACH\b/.test(reason)) {
    return [`${url.host} cannot be reached from here: check the network, a proxy or a firewall`];
  }
  if (/CERT|certificate|\bTLS\b|\bSSL\b/i.test(reason)) {
    return [`the TLS certificate of ${url.host} was refused: check the url's host name, or trust its issuer (NODE_EXTRA_CA_CERTS)`];
  }
  if (/\b401\b/.test(reason)) return [`the server refused gaggle (401): check ${key}.headers (a token?), or add an [${key}.oauth] table`];
  if (/\b403\b/.test(reason)) return [`the server refused gaggle (403): the credentials in ${key}.headers are not allowed this`];
  if (/\b404\b/.test(reason)) return [`no MCP endpoint at ${url.href}: check the path (often /mcp, or /sse for the legacy transport)`];
  return [`check ${key}.url and headers, and that the server is up`];
}

/** The child's last stderr lines, which usually say why a process gave up. */
function stderrAdvice(status: ChildStatus): string[] {
  const tail = status.stderrTail.filter((line) => !line.startsWith(STDOUT_GARBAGE_MARK)).slice(-5);
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
