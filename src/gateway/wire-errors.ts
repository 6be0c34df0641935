// Failures of requests other than tools/call travel as JSON-RPC errors; this picks the code for each.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { GaggleError, errorMessage } from "../errors.js";

/** The JSON-RPC code the MCP specification gives an unknown resource URI. */
export const RESOURCE_NOT_FOUND = -32002;

export function toMcpError(error: unknown): McpError {
  if (error instanceof McpError) return error;
  if (error instanceof GaggleError) {
    const code =
      error.code === "TIMEOUT"
        ? ErrorCode.RequestTimeout
        : error.code === "SERVER_FAILED" || error.code === "SESSION_ERROR"
          ? ErrorCode.InternalError
          : ErrorCode.InvalidParams;
    return new McpError(code, error.hint ? `${error.message} (${error.hint})` : error.message, { code: error.code });
  }
  return new McpError(ErrorCode.InternalError, errorMessage(error));
}

/** Runs a handler body, turning whatever it throws into the JSON-RPC error a client should see. */
export async function onTheWire<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toMcpError(error);
  }
}
