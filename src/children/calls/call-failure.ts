// The GaggleErrors a real child fails with: what the SDK threw during a request, a failed start, a back-off refusal; each says what to do.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { GaggleError, errorMessage, refusedPort, type Lookup } from "../../shared/errors.js";
import type { ChildConfig } from "../../config/index.js";
import type { CloseReason, QueueDepth } from "../child.js";
import { ChildErrorAnswer } from "../wire/child-error-answer.js";
import { remoteAdvice } from "./remote-advice.js";
import { isStartTimeout, slowStartAdvice } from "./slow-start.js";

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
  /** Why, when the closer said. */
  closedBecause: CloseReason | undefined;
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
    // The limit that ran out travels in the error's data, as the child's wire and the SDK both set it; the
    // wire adds how long a call that waited its turn queued and ran.
    const limits = (error.data ?? {}) as { timeout?: number; maxTotalTimeout?: number; queued?: number; ran?: number };
    const spent = limits.queued === undefined ? "" : ` (queued ${limits.queued}ms, ran ${limits.ran}ms)`;
    if (limits.maxTotalTimeout !== undefined) {
      return new GaggleError(
        "TIMEOUT",
        `${ctx.what} on ${ctx.child} was still reporting progress after max_timeout_ms (${limits.maxTotalTimeout}ms)${spent}; ${queue}`,
        { hint: `raise max_timeout_ms for ${ctx.child} in the config if the tool needs longer`, cause: error },
      );
    }
    const after = limits.timeout === undefined ? "" : ` after ${limits.timeout}ms`;
    return new GaggleError("TIMEOUT", `${ctx.what} on ${ctx.child} timed out${after}${spent}; ${queue}`, {
      hint: `raise timeout_ms for ${ctx.child} in the config if the tool needs longer`,
      cause: error,
    });
  }
  // A child's own error answer is its word, whatever its code: only gaggle's side of the connection says it closed.
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed && !(error instanceof ChildErrorAnswer)) {
    if (ctx.closing) return closedFailure(ctx, error);
    return new GaggleError(
      "SERVER_FAILED",
      `${ctx.child} ${ctx.endedBecause ?? "closed its connection"} while serving ${ctx.what}${stderrSuffix(ctx.stderrTail)}`,
      { hint: `the next call restarts ${ctx.child}`, lookup: { server: ctx.child, stderr: true }, cause: error },
    );
  }
  if (error instanceof McpError) {
    return new GaggleError("SESSION_ERROR", `${ctx.child} answered ${ctx.what} with error ${error.code}: ${error.message}`, {
      cause: error,
    });
  }
  return new GaggleError("SESSION_ERROR", `${ctx.what} on ${ctx.child} failed: ${errorMessage(error)}`, { cause: error });
}

/**
 * A request its client cancelled, or whose client's session ended: it failed for that alone, whatever it threw (a
 * closed stream, an aborted fetch), and says nothing of the child or its connection.
 */
export function cancelledFailure(child: string, what: string, reason: unknown, cause: unknown): GaggleError {
  return new GaggleError("CANCELLED", `${what} on ${child} was cancelled: ${errorMessage(reason)}`, { cause });
}

/** A request whose session gaggle closed under it, told why when the closer said. */
function closedFailure({ child, what, closedBecause }: FailureContext, cause: unknown): GaggleError {
  const inFlight = `while ${what} was in flight`;
  switch (closedBecause) {
    case "removed":
      return new GaggleError("SESSION_ERROR", `${child} was removed from the config ${inFlight}`, {
        hint: `add mcp_servers.${child} to the config again to call it`,
        cause,
      });
    case "edited":
      return new GaggleError("SESSION_ERROR", `${child} was started again with its edited config ${inFlight}`, {
        hint: "call again: the next call reaches it as the config now sets it",
        cause,
      });
    case "shutdown":
      return new GaggleError("SESSION_ERROR", `gaggle is shutting down: ${child}'s session was closed ${inFlight}`, { cause });
    default: {
      const by = closedBecause === "asked" ? " by close_child_session" : "";
      return new GaggleError("SESSION_ERROR", `${child}'s session was closed${by} ${inFlight}`, {
        hint: "call again: the next call starts a new session",
        cause,
      });
    }
  }
}

/** A tools/call whose time ran out while it waited for its turn (see CallTurn): it never reached the child. */
export function turnTimeout(child: string, tool: string, timeoutMs: number, queuedMs: number, queue: QueueDepth): GaggleError {
  return new GaggleError(
    "TIMEOUT",
    `tool "${tool}" on ${child} timed out after ${timeoutMs}ms (queued ${queuedMs}ms, ran 0ms) waiting for its turn; it never reached ` +
      `the child (queue has ${queue.running} running, ${queue.waiting} waiting)`,
    { hint: `raise timeout_ms or concurrency for ${child} in the config, or make fewer calls to it at once` },
  );
}

/** A failed start (SERVER_FAILED), and whether it failed by running out of time. */
export class StartFailure extends GaggleError {
  /** The time limit a start that was still starting when it ran out had been given; undefined when it failed otherwise. */
  readonly timedOutAfterMs: number | undefined;

  constructor(message: string, options: { hint: string; lookup?: Lookup; cause: unknown }, timedOutAfterMs: number | undefined) {
    super("SERVER_FAILED", message, options);
    this.timedOutAfterMs = timedOutAfterMs;
  }
}

/**
 * A start that failed, with what to check: the command for a process, the url for a remote server, the time
 * limit for a start that ran out of time. `timeoutMs`: what the start was given (startup_timeout_ms, or more
 * for a first start; see slow-start.ts).
 */
export function startFailure(config: ChildConfig, timeoutMs: number, reason: string, stderrTail: string[], cause: unknown): GaggleError {
  const child = config.name;
  // Nothing is wrong with the config: a person has to sign in, or the account signed in is refused; the error says so.
  if (cause instanceof GaggleError && (cause.code === "AUTH_REQUIRED" || cause.code === "PERMISSION_DENIED")) return cause;
  const timedOutAfterMs = isStartTimeout(cause) ? timeoutMs : undefined;
  // A failure that already knows what to check (a sign-in's server not answering) says so.
  const known = cause instanceof GaggleError && cause.code === "SERVER_FAILED" ? cause.hint : undefined;
  const hint =
    known ??
    (timedOutAfterMs !== undefined ? slowStartAdvice(config, timedOutAfterMs).join("; ") : undefined) ??
    (config.transport === "stdio"
      ? `check the command, args and env of ${child} in the config`
      : (portAdvice(config, cause) ?? remoteAdvice(config, cause)));
  // A process's stderr says more than the config does: where to read it follows. A remote child has none.
  const stderr = known === undefined && config.transport === "stdio";
  const lookup: Lookup | undefined = stderr ? { server: child, stderr: true } : undefined;
  return new StartFailure(`${child} ${reason}${stderrSuffix(stderrTail)}`, { hint, ...(lookup && { lookup }), cause }, timedOutAfterMs);
}

/** A port fetch refuses to reach (see refusedPort): named, with what to do, in place of the url's general advice. */
function portAdvice(config: ChildConfig, cause: unknown): string | undefined {
  const why = refusedPort(cause, config.url!);
  return why && `${why}; serve the child on another port, and change it in mcp_servers.${config.name}.url`;
}

/**
 * A call refused while the back-off after `failedStarts` failed starts in a row lasts `waitMs` more; it carries the
 * failed start's stderr lines, which a client listing no get_child_status (search and proxy modes) has no other way to read.
 */
export function backoffRefusal(
  child: string,
  failedStarts: number,
  waitMs: number,
  lastError: string | undefined,
  stderrTail: string[],
  last?: GaggleError,
): GaggleError {
  // Waiting helps nothing when a person has to sign in: the call is told so, and how.
  if (last?.code === "AUTH_REQUIRED") return last;
  return new GaggleError(
    "SERVER_FAILED",
    `${child} failed to start ${failedStarts} time(s) in a row; the next attempt is allowed in ` +
      `${(waitMs / 1000).toFixed(1)}s. Last error: ${lastError ?? "unknown"}${stderrSuffix(stderrTail)}`,
    { hint: "fix the cause the last error names", lookup: { server: child, retry: true } },
  );
}
