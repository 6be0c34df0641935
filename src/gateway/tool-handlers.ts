// tools/list and tools/call: the meta-tools, and in proxy mode every exposed child tool under its exposed name.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../children/child.js";
import type { Gaggle } from "./gaggle.js";
import { callContext } from "./call-context.js";
import type { ClientSession } from "./client-session.js";
import { failureResult } from "../shared/tool-results.js";
import { MetaHandlers } from "./meta-handlers.js";
import { META_TOOLS, isMetaTool } from "./meta-tools.js";
import type { ToolCallHandler } from "./tool-call-lane.js";
import { onTheWire } from "./wire-errors.js";
import { WireError } from "../shared/errors.js";

/** Registers tools/list; returns the tools/call handler, which the session's tool-call lane runs. */
export function registerToolHandlers(server: Server, session: ClientSession, gaggle: Gaggle): ToolCallHandler {
  const { catalog, router } = gaggle;
  const meta = new MetaHandlers(router);

  server.setRequestHandler(ListToolsRequestSchema, () =>
    onTheWire(async () => ({ tools: [...(catalog.listsMetaTools ? META_TOOLS : []), ...(await catalog.tools())] })),
  );

  // Not a handler of the SDK Server: it would re-parse each result with its strict content schema, which drops
  // fields it does not know and refuses newer block types. A gateway passes the child's result on as written.
  /** A tool exposed under its own name. What this rejects with, the lane answers as a JSON-RPC error. */
  const callExposed = async (name: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> => {
    const owned = await catalog.resolveTool(name);
    if (!owned) {
      throw new WireError(ErrorCode.InvalidParams, `Unknown tool: ${name}; tools/list shows the tools this gateway offers`);
    }
    try {
      return await router.callTool(owned.child.name, owned.item.name, args, ctx);
    } catch (error) {
      return failureResult(error);
    }
  };

  return (params, extra) => {
    const { name, arguments: args, _meta } = params;
    const ctx = callContext(session, _meta, extra);
    if (isMetaTool(name) && catalog.listsMetaTools) return meta.call(name, args, ctx);
    return callExposed(name, args, ctx);
  };
}
