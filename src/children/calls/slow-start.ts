// A start that ran past its time limit: a process was still starting, so the advice is about time, not about
// the command (a first `npx -y` start is the usual case: it downloads the package, and may compile it); a remote
// server took the request and never answered it.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { fetchesOnFirstRun, type ChildConfig } from "../../config/index.js";

/** A start that failed this way ran past its time limit: initialize timed out, the child still starting. */
export function isStartTimeout(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.RequestTimeout;
}

/** The reason a start past `timeoutMs` is given. */
export function startTimeoutReason(timeoutMs: number): string {
  return `did not answer initialize within ${timeoutMs}ms (startup_timeout_ms)`;
}

/**
 * What to do about a start that ran past `timeoutMs`, in a person's words. A remote child has no process that
 * could still be starting: the server at its url took the request and did not answer it.
 */
export function slowStartAdvice(config: ChildConfig, timeoutMs: number): string[] {
  if (config.transport !== "stdio") {
    return [
      `nothing at ${config.url} answered within startup_timeout_ms (${timeoutMs} ms): check that the server there is up and serves ` +
        `MCP at that url, or raise mcp_servers.${config.name}.startup_timeout_ms if it is slow to answer`,
    ];
  }
  const advice = [`it was still starting when startup_timeout_ms (${timeoutMs} ms) ran out: raise mcp_servers.${config.name}.startup_timeout_ms`];
  if (config.command !== undefined && fetchesOnFirstRun(config.command)) {
    const runner = config.command.split("/").pop();
    advice.push(
      `a first \`${runner}\` run downloads the package and may compile it: run \`${[config.command, ...config.args].join(" ")}\` once by hand, then try again`,
    );
  }
  return advice;
}
