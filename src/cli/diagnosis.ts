// Why a child did not start, in a person's words, and what to do about it: the cause behind the error (a command
// not on PATH, a host that does not resolve, a port nobody listens on, a refused certificate, a web page where the
// MCP endpoint should be, a sign-in, a start past its time limit, stdout lines that are not JSON-RPC) rather than
// the error's own wording.
import type { ChildStatus } from "../children/child.js";
import { StartFailure } from "../children/calls/call-failure.js";
import { slowStartAdvice } from "../children/calls/slow-start.js";
import { remoteAdvice } from "../children/calls/remote-advice.js";
import { signInCommand } from "../children/oauth/sign-in-command.js";
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
    return { reason, advice: [`run: ${signInCommand(config)}`] };
  }
  if (error instanceof StartFailure && error.timedOutAfterMs !== undefined) {
    return { reason, advice: [...noiseAdvice(status), ...slowStartAdvice(config, error.timedOutAfterMs), ...stderrAdvice(status.stderrTail)] };
  }
  if (config.transport !== "stdio") return badPort(config, error) ?? { reason, advice: [remoteAdvice(config, error)] };
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

/** A port fetch refuses to reach: named, with why and what to do. */
function badPort(config: ChildConfig, error: unknown): Diagnosis | undefined {
  const reason = refusedPort(error, config.url!);
  return reason === undefined ? undefined : { reason, advice: [`serve the child on another port, and change it in mcp_servers.${config.name}.url`] };
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
