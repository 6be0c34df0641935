// tools/list and tools/call: the meta-tools, and in proxy mode every exposed child tool under its exposed name.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { callContext } from "./call-context.js";
import type { ClientSession } from "./client-session.js";
import type { GatewayRequests } from "./requests.js";
import type { ToolCallHandler } from "./tool-call-lane.js";
import { onTheWire } from "./wire-errors.js";

/**
 * Registers tools/list; returns the tools/call handler, which the session's tool-call lane runs. Not a handler
 * of the SDK Server: it would re-parse each result with its strict content schema, which drops fields it does
 * not know and refuses newer block types. A gateway passes the child's result on as written.
 */
export function registerToolHandlers(server: Server, session: ClientSession, requests: GatewayRequests): ToolCallHandler {
  server.setRequestHandler(ListToolsRequestSchema, () => onTheWire(() => requests.listTools()));
  return (params, extra) => requests.callTool(params.name, params.arguments, callContext(session, params._meta, extra));
}
