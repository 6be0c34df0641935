// Turns what the SDK throws during a request to a child into a GaggleError that says what happened and what to do.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { GaggleError, errorMessage } from "../shared/errors.js";
import type { QueueDepth } from "./child.js";

export interface FailureContext {
  child: string;
  /** What was being asked, e.g. `tool "echo"` or `tools/list`. */
  what: string;
  /** The queue a tools/call came through; other requests skip the queue. */
  queue: QueueDepth | undefined;
  /** Why the session ended, when it did (exit code and signal). */
  endedBecause: string | undefined;
  /** True when gaggle itself was closing the session. */
  closing: boolean;
  stderrTail: string[];
}

const STDERR_LINES_IN_ERRORS = 10;

export function stderrSuffix(lines: string[]): string {
  const tail = lines.slice(-STDERR_LINES_IN_ERRORS).filter((line) => line.trim() !== "");
  return tail.length ? `; last stderr lines:\n${tail.join("\n")}` : "";
}

export function callFailure(error: unknown, ctx: FailureContext): GaggleError {
  if (error instanceof GaggleError) return error;
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    const depth = ctx.queue ? ` (queue has ${ctx.queue.running} running, ${ctx.queue.waiting} waiting)` : "";
    const queue = `the child was sent notifications/cancelled${depth}`;
    // The limit that ran out travels in the error's data, as the forwarding lane and the SDK both set it.
    const limits = (error.data ?? {}) as { timeout?: number; maxTotalTimeout?: number };
    if (limits.maxTotalTimeout !== undefined) {
      return new GaggleError(
        "TIMEOUT",
        `${ctx.what} on ${ctx.child} was still reporting progress after max_timeout_ms (${limits.maxTotalTimeout}ms); ${queue}`,
        { hint: `raise max_timeout_ms for ${ctx.child} in the config if the tool needs longer`, cause: error },
      );
    }
    const after = limits.timeout === undefined ? "" : ` after ${limits.timeout}ms`;
    return new GaggleError("TIMEOUT", `${ctx.what} on ${ctx.child} timed out${after}; ${queue}`, {
      hint: `raise timeout_ms for ${ctx.child} in the config if the tool needs longer`,
      cause: error,
    });
  }
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
    if (ctx.closing) {
      return new GaggleError("SESSION_ERROR", `${ctx.child}'s session was closed while ${ctx.what} was in flight`, {
        hint: "call again: the next call starts a new session",
        cause: error,
      });
    }
    return new GaggleError(
      "SERVER_FAILED",
      `${ctx.child} ${ctx.endedBecause ?? "closed its connection"} while serving ${ctx.what}${stderrSuffix(ctx.stderrTail)}`,
      { hint: `the next call restarts ${ctx.child}; get_child_status shows its stderr`, cause: error },
    );
  }
  if (error instanceof McpError) {
    return new GaggleError("SESSION_ERROR", `${ctx.child} answered ${ctx.what} with error ${error.code}: ${error.message}`, {
      cause: error,
    });
  }
  return new GaggleError("SESSION_ERROR", `${ctx.what} on ${ctx.child} failed: ${errorMessage(error)}`, { cause: error });
}
