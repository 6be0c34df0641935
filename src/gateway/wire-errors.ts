// Failures of requests other than tools/call travel as JSON-RPC errors; this picks the code for each.
import { ErrorCode, McpError, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { GaggleError, WireError, errorMessage } from "../shared/errors.js";

export function toWireError(error: unknown): WireError {
  if (error instanceof WireError) return error;
  // A child's own error, passed on with its code; the SDK's "MCP error N:" prefix would come back twice.
  if (error instanceof McpError) return new WireError(error.code, error.message.replace(/^MCP error -?\d+: /, ""), error.data);
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
