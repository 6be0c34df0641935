// The MCP server one client talks to: meta-tools and the gateway's resources, backed by the shared router.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../children/child.js";
import type { Router } from "../children/router.js";
import type { GaggleConfig } from "../config/index.js";
import { GAGGLE_NAME, GAGGLE_VERSION } from "../version.js";
import { MetaHandlers } from "./meta-handlers.js";
import { META_TOOLS, isMetaTool } from "./meta-tools.js";
import { GATEWAY_RESOURCES, readGatewayResource } from "./resources.js";

/** The JSON-RPC code the MCP specification gives an unknown resource URI. */
const RESOURCE_NOT_FOUND = -32002;

const INSTRUCTIONS =
  "This gateway fronts several MCP servers (children). list_registered_children names them, get_schema(server_id) " +
  "shows a child's tools, execute_child_tool(server_id, tool_name, arguments) calls one.";

export function createGatewayServer(router: Router, config: GaggleConfig): Server {
  const server = new Server(
    { name: GAGGLE_NAME, version: GAGGLE_VERSION },
    { capabilities: { tools: { listChanged: true }, resources: {} }, instructions: INSTRUCTIONS },
  );
  const handlers = new MetaHandlers(router);

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: META_TOOLS }));

  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const { name, arguments: args, _meta } = request.params;
    if (!isMetaTool(name)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}; this gateway's tools are ${META_TOOLS.map((t) => t.name).join(", ")}`);
    }
    const progressToken = _meta?.progressToken;
    const ctx: CallContext = { signal: extra.signal };
    if (progressToken !== undefined) {
      ctx.onprogress = (progress) =>
        void extra.sendNotification({ method: "notifications/progress", params: { ...progress, progressToken } }).catch(() => {});
    }
    return handlers.call(name, args, ctx);
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: GATEWAY_RESOURCES }));

  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const result = readGatewayResource(request.params.uri, router, config);
    if (!result) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${request.params.uri}`, { uri: request.params.uri });
    return result;
  });

  return server;
}
