// Local error type for every failure a caller can see, with the stable codes the gateway puts on the wire.
import { isModernErrorCode } from "./modern-protocol.js";

export const ERROR_CODES = [
  "SERVER_NOT_FOUND",
  "TOOL_NOT_FOUND",
  "INVALID_ARGS",
  "SERVER_FAILED",
  "TIMEOUT",
  "SESSION_ERROR",
  // A remote child needs a person to sign in (OAuth); the hint gives the command.
  "AUTH_REQUIRED",
  // Raised by the built-in virtual children:
  "PERMISSION_DENIED",
  "LIMIT_REACHED",
  "NOT_FOUND",
  // What a built-in tool ran failed on its own terms (an SQL error), the tool itself working.
  "EXECUTION_ERROR",
  // A call its client cancelled, or whose client's session ended: never the child's failure. Its client is sent no answer.
  "CANCELLED",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * What a caller reads next to get a call right: every child's name (neither field), a child's tools (`server`), or
 * one tool's input schema (`server` and `tool`); with `stderr`, where the child's stderr is shown (`server`); with
 * `retry`, where a child that keeps failing to start shows why, and how to start it again before its back-off ends
 * (`server`). A surface without such a tool leaves those two unsaid (the error carries the last lines and the last
 * error). Each surface says how in its own words (see SayLookup).
 */
export interface Lookup {
  server?: string;
  tool?: string;
  stderr?: true;
  retry?: true;
}

/** How one surface (the meta-tools, search mode, proxy mode, the command line) tells a caller to make a Lookup. */
export type SayLookup = (lookup: Lookup) => string;

/** The meta-tools' words: what a hint says wherever get_schema and list_registered_children are listed. */
export const sayWithMetaTools: SayLookup = ({ server, tool, stderr, retry }) =>
  retry
    ? `get_child_status("${server}") shows why, and close_child_session("${server}") starts it again at once`
    : stderr
      ? "get_child_status shows its stderr"
      : server === undefined
        ? "list_registered_children lists every name"
        : tool === undefined
          ? `call get_schema("${server}") for its tools`
          : `call get_schema("${server}", "${tool}") for its input schema`;

/** A person's words, at a shell or reading the log: the commands that show what the meta-tools would. */
export const sayToPerson: SayLookup = ({ server, tool, stderr, retry }) =>
  stderr || retry
    ? `\`gaggle doctor ${server}\` starts it and shows its stderr`
    : server === undefined
      ? "`gaggle list` names every child"
      : tool === undefined
        ? `\`gaggle schema ${server}\` lists its tools`
        : `\`gaggle schema ${server} ${tool}\` shows its input schema`;

export class GaggleError extends Error {
  override readonly name = "GaggleError";
  readonly code: ErrorCode;
  /** What the caller can do next, beyond a lookup, when there is something useful to say. */
  private readonly advice: string | undefined;
  /** What the caller should read next; said in the words of the surface that shows the error. */
  readonly lookup: Lookup | undefined;

  constructor(code: ErrorCode, message: string, options: { hint?: string; lookup?: Lookup; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.advice = options.hint;
    this.lookup = options.lookup;
  }

  /** What the caller can do next, in the meta-tools' words. */
  get hint(): string | undefined {
    return this.hintFor(sayWithMetaTools);
  }

  hintFor(say: SayLookup): string | undefined {
    const parts = [this.advice, this.lookup && say(this.lookup)].filter((part) => part !== undefined && part !== "");
    // Where the stderr or the cause is follows the advice as a clause of its own; a lookup of names or tools, as a sentence.
    return parts.length > 0 ? parts.join(this.lookup?.stderr || this.lookup?.retry ? "; " : " ") : undefined;
  }
}

/**
 * A line from the client that is not a message gaggle can take. It has been answered already (-32700 or -32600);
 * what is logged is the reason, not a stack: the fault is in what was sent, not in gaggle.
 */
export class UnreadableMessageError extends Error {
  override readonly name = "UnreadableMessageError";
}

/**
 * gaggle cannot serve as it was asked to (an address it may not or cannot listen on): the person who started it
 * is told in one line what was wrong and what to do, and gaggle exits 1. The fault is in the request, not in
 * gaggle, so no stack trace.
 */
export class StartupError extends Error {
  override readonly name = "StartupError";
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The network failure behind fetch's own TypeError "fetch failed" (a refused connection, a host that does not
 * resolve, a refused certificate): its code where it has one (ECONNREFUSED), else its message. Undefined for
 * anything else, an HTTP status included. fetch (undici) rejects a request that went out and failed with a
 * TypeError whose `cause` is the network's error; the TypeErrors it throws for a request it could not build carry
 * no cause (a GET with a body) or a TypeError one (a URL it cannot parse), and an abort is a DOMException.
 */
export function fetchFailure(error: unknown): { code: string | undefined; message: string } | undefined {
  if (!(error instanceof TypeError) || !(error.cause instanceof Error) || error.cause instanceof TypeError) return undefined;
  const cause = error.cause as Error & { code?: unknown };
  return { code: typeof cause.code === "string" ? cause.code : undefined, message: cause.message || "no answer" };
}

/**
 * fetch refuses, without trying, the ports the Fetch standard lists as bad (those of other protocols: 6000 is X11,
 * 6667 IRC), and says only "bad port". Found in `error` or its causes, this names the port of `url` and why;
 * undefined for any other failure. The refusal has no code: its cause's whole message is all it is known by.
 */
export function refusedPort(error: unknown, url: string): string | undefined {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) {
    if (fetchFailure(at)?.message === "bad port") {
      return `fetch refuses port ${new URL(url).port}: the Fetch standard blocks it, as the port of another protocol`;
    }
  }
  return undefined;
}

/**
 * The message with the messages of its causes, as far down as they go and each said once: fetch's own
 * "fetch failed" says nothing until its cause ("connect ECONNREFUSED 127.0.0.1:9") is read.
 */
export function errorChain(error: unknown): string {
  const parts: string[] = [];
  for (let at: unknown = error; at !== undefined && parts.length < 5; at = at instanceof Error ? at.cause : undefined) {
    const message = errorMessage(at);
    if (!parts.some((part) => part.includes(message))) parts.push(message);
  }
  return parts.join(": ");
}

/**
 * An error meant for the JSON-RPC wire as it is: `code`, `message` and `data` become the error response.
 * Not the SDK's McpError, whose message already starts with "MCP error N:", a prefix the receiving SDK
 * adds once more.
 */
export class WireError extends Error {
  override readonly name = "WireError";

  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * Whether `error` refuses the request itself rather than reporting a failed call: gaggle's own wire errors
 * and a child's refusals with the codes above. A client must get these as JSON-RPC errors, even for a tools/call.
 */
export function isRequestRefusal(error: unknown): boolean {
  if (error instanceof WireError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && isModernErrorCode(code);
}

/** The error the MCP specification gives an unknown resource URI (JSON-RPC code -32002). */
export function resourceNotFound(uri: string): WireError {
  return new WireError(-32002, `Resource not found: ${uri}`, { uri });
}
