// tools/list and tools/call: the meta-tools, and in proxy mode every exposed child tool under its exposed name.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ErrorCode, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Gaggle } from "../gaggle.js";
import { callContext } from "./call-context.js";
import type { CallExtra, ClientSession } from "./client-session.js";
import { failureResult } from "./failure.js";
import { MetaHandlers } from "./meta-handlers.js";
import { META_TOOLS, isMetaTool } from "./meta-tools.js";
import { onTheWire } from "./wire-errors.js";
import { WireError } from "../errors.js";

/** What gaggle reads of a tools/call request; everything else in it is passed along as it came. */
const ToolCallRequestSchema = z.looseObject({
  method: z.literal("tools/call"),
  params: z.looseObject({
    name: z.string(),
    arguments: z.record(z.string(), z.unknown()).optional(),
    _meta: z.record(z.string(), z.unknown()).optional(),
  }),
});
type ToolCallRequest = z.output<typeof ToolCallRequestSchema>;

export function registerToolHandlers(server: Server, session: ClientSession, gaggle: Gaggle): void {
  const { catalog, router } = gaggle;
  const meta = new MetaHandlers(router);

  server.setRequestHandler(ListToolsRequestSchema, () =>
    onTheWire(async () => ({ tools: [...(catalog.listsMetaTools ? META_TOOLS : []), ...(await catalog.tools())] })),
  );

  // Registered at the Protocol level on purpose: the SDK Server wraps tools/call handlers to re-parse each
  // result with its strict content schema, which drops fields it does not know and refuses newer block
  // types. A gateway passes the child's result on exactly as written (and skips a parse per call).
  Protocol.prototype.setRequestHandler.call(server, ToolCallRequestSchema, async (request: ToolCallRequest, extra: CallExtra) => {
    const { name, arguments: args, _meta } = request.params;
    const ctx = callContext(session, _meta, extra);
    if (isMetaTool(name) && catalog.listsMetaTools) return meta.call(name, args, ctx);
    const owned = await onTheWire(() => catalog.resolveTool(name));
    if (!owned) {
      throw new WireError(ErrorCode.InvalidParams, `Unknown tool: ${name}; tools/list shows the tools this gateway offers`);
    }
    try {
      return await router.callTool(owned.child.name, owned.item.name, args, ctx);
    } catch (error) {
      return failureResult(error);
    }
  });
}
