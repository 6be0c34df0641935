// Failures of requests other than tools/call travel as JSON-RPC errors; this picks the code for each.
import { ErrorCode, McpError, type CallToolResult, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { childErrorAnswer } from "../children/wire/child-error-answer.js";
import { GaggleError, WireError, errorMessage, type SayLookup } from "../shared/errors.js";
import { refusedOrFailed } from "../shared/tool-results.js";

/** A child's own error, passed on with its code and data; the SDK's "MCP error N:" prefix would come back twice. */
const asWritten = (error: McpError) => new WireError(error.code, error.message.replace(/^MCP error -?\d+: /, ""), error.data);

export function toWireError(error: unknown): WireError {
  if (error instanceof WireError) return error;
  const answer = childErrorAnswer(error);
  if (answer) return asWritten(answer);
  if (error instanceof McpError) return asWritten(error);
  if (error instanceof GaggleError) {
    const code =
      error.code === "TIMEOUT"
        ? ErrorCode.RequestTimeout
        : error.code === "SERVER_FAILED" || error.code === "SESSION_ERROR"
          ? ErrorCode.InternalError
          : ErrorCode.InvalidParams;
    return new WireError(code, error.hint ? `${error.message} (${error.hint})` : error.message, { code: error.code });
  }
  return new WireError(ErrorCode.InternalError, errorMessage(error));
}

/**
 * The end of a failed call to a child's tool reached under its own name: the child's own error answer goes
 * to the client as the JSON-RPC error it is, as do refusals of the request; any other failure (a timeout, a
 * crash, a full queue) is an isError result the model can read.
 */
export function answeredOrFailed(error: unknown, say?: SayLookup): CallToolResult {
  const answer = childErrorAnswer(error);
  if (answer) throw asWritten(answer);
  return refusedOrFailed(error, say);
}

/** Runs a handler body, turning whatever it throws into the JSON-RPC error a client should see. */
export async function onTheWire<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toWireError(error);
  }
}

/** The JSON-RPC error response a thrown error becomes; `recode` may change its code (an era that forbids one). */
export function errorReply(id: RequestId, error: unknown, recode: (code: number) => number = (code) => code): JSONRPCMessage {
  const { code, message, data } = toWireError(error);
  return { jsonrpc: "2.0", id, error: { code: recode(code), message, ...(data !== undefined && { data }) } } as JSONRPCMessage;
}
