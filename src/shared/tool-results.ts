// The tool results gaggle answers with itself: plain text, JSON text, and a failure as an isError result carrying a stable code.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GaggleError, errorMessage, isRequestRefusal, sayWithMetaTools, type SayLookup } from "./errors.js";

/** `say` words the hint's lookup for the surface the caller uses (the meta-tools' words unless given). */
export function failureResult(error: unknown, say: SayLookup = sayWithMetaTools): CallToolResult {
  const failure = error instanceof GaggleError ? error : new GaggleError("SESSION_ERROR", errorMessage(error), { cause: error });
  const hint = failure.hintFor(say);
  const body = {
    status: "failed",
    code: failure.code,
    error: failure.message,
    ...(hint && { hint }),
  };
  return { isError: true, content: [{ type: "text", text: JSON.stringify(body) }] };
}

/** A refusal of the request itself (see isRequestRefusal) is thrown on, to be a JSON-RPC error; any other failure is a result. */
export function refusedOrFailed(error: unknown, say: SayLookup = sayWithMetaTools): CallToolResult {
  if (isRequestRefusal(error)) throw error;
  return failureResult(error, say);
}

export function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }] };
}

export function textResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }] };
}
