// tools/list and tools/call: the meta-tools, and in proxy mode every exposed child tool under its exposed name.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { WireError } from "../shared/errors.js";
import { describeJson, isObject } from "../shared/json.js";
import { callContext } from "./call-context.js";
import type { CallExtra, ClientSession } from "./client-session.js";
import type { GatewayRequests } from "./requests.js";
import { onTheWire } from "./wire-errors.js";

/** What gaggle reads of a tools/call request; everything else in it is passed along as it came. */
export interface ToolCallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** Starts a tools/call: its promise rejects with a failure of the call, which GatewayRequests.callFailed answers. */
export type ToolCallHandler = (params: ToolCallParams, extra: CallExtra) => Promise<CallToolResult>;

/**
 * Registers tools/list; returns the tools/call handler, which the client's connection runs (see ClientConnection).
 * Not a handler of the SDK Server: it would re-parse each result with its strict content schema, which drops fields
 * it does not know and refuses newer block types. A gateway passes the child's result on as written.
 */
export function registerToolHandlers(server: Server, session: ClientSession, requests: GatewayRequests): ToolCallHandler {
  server.setRequestHandler(ListToolsRequestSchema, () => onTheWire(() => requests.listTools(server.getClientVersion()?.name)));
  return (params, extra) => requests.startCall(params.name, params.arguments, callContext(session, params._meta, extra));
}

/** The fields routing reads, checked; a request without them is answered -32602 before anything runs. */
export function toolCallParams(params: unknown): ToolCallParams {
  const fields = isObject(params) ? params : {};
  if (typeof fields.name !== "string") {
    throw new WireError(ErrorCode.InvalidParams, `tools/call needs params.name, the tool's name as a string; found ${describeJson(fields.name)}`);
  }
  // Each member read by its name: a load by a key that changes goes megamorphic, on every call.
  objectOrAbsent("arguments", fields.arguments);
  objectOrAbsent("_meta", fields._meta);
  return fields as unknown as ToolCallParams;
}

function objectOrAbsent(key: "arguments" | "_meta", value: unknown): void {
  if (value !== undefined && !isObject(value)) {
    throw new WireError(ErrorCode.InvalidParams, `tools/call params.${key} must be an object; found ${describeJson(value)}`);
  }
}
