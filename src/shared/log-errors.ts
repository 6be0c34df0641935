// How an error is written to the log: a failure someone can act on as one line, a fault of gaggle's with its stack.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
import { GaggleError, sayToPerson, StartupError, UnreadableMessageError } from "./errors.js";

/**
 * Failures whose fault lies outside gaggle (a child that will not start, a refused sign-in, a peer's protocol
 * error, a request gaggle cannot serve): their message and hint say what happened and what to do, and a stack
 * trace would only bury that under lines of gaggle's own code.
 */
function isAccountedFor(error: Error): boolean {
  return error instanceof GaggleError || error instanceof StartupError || error instanceof UnreadableMessageError || error instanceof McpError;
}

/**
 * The serializer of the `err` field. A failure accounted for is its type, message, code and hint (in a person's
 * words: the commands of the command line), on one line:
 * no stack, and no causes (a GaggleError's message already says what its cause did). Anything else is a fault of
 * gaggle's own and keeps pino's usual form with the stack. At debug and trace every error keeps its stack.
 */
export function errSerializer(verbose: boolean): (value: unknown) => unknown {
  return (value) => {
    // Not an Error: already written out (see withStack), or not an error at all.
    if (!(value instanceof Error)) return value;
    if (verbose || !isAccountedFor(value)) return pino.stdSerializers.err(value);
    // The log is read by a person, who has the command line rather than the meta-tools.
    const { code, hint } =
      value instanceof GaggleError ? { code: value.code, hint: value.hintFor(sayToPerson) } : (value as { code?: unknown; hint?: unknown });
    return { type: value.name, message: value.message, ...(code === undefined ? {} : { code }), ...(hint === undefined ? {} : { hint }) };
  };
}

/**
 * `error` as pino writes an error with its stack, whatever its type: for the `err` of a log line about a fault
 * of gaggle's own (an uncaught exception, a request that failed with 500), where even a GaggleError is a bug.
 */
export function withStack(error: unknown): unknown {
  return error instanceof Error ? pino.stdSerializers.err(error) : error;
}
