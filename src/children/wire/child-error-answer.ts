// A child's own JSON-RPC error answer to a forwarded request, told apart from the failures gaggle meets on the way.
import { McpError } from "@modelcontextprotocol/sdk/types.js";

/**
 * The child answered the request with this error (code, message and data as it wrote them). Unlike a timeout
 * or a lost connection, it is the child's word, and a client that reaches the child's own tool, prompt or
 * resource gets it as it is.
 */
export class ChildErrorAnswer extends McpError {}

/** The child's error answer a failure comes from: the error itself, or the cause gaggle wrapped it with. */
export function childErrorAnswer(error: unknown): ChildErrorAnswer | undefined {
  if (error instanceof ChildErrorAnswer) return error;
  return error instanceof Error && error.cause instanceof ChildErrorAnswer ? error.cause : undefined;
}
