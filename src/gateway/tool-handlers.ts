// tools/list and tools/call: the meta-tools, and in proxy mode every exposed child tool under its exposed name.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Gaggle } from "../gaggle.js";
import { callContext } from "./call-context.js";
import type { ClientSession } from "./client-session.js";
import { failureResult } from "./failure.js";
import { MetaHandlers } from "./meta-handlers.js";
import { META_TOOLS, isMetaTool } from "./meta-tools.js";
import { onTheWire } from "./wire-errors.js";
import { WireError } from "../errors.js";

export function registerToolHandlers(server: Server, session: ClientSession, gaggle: Gaggle): void {
  const { catalog, router } = gaggle;
  const meta = new MetaHandlers(router);

  server.setRequestHandler(ListToolsRequestSchema, () =>
    onTheWire(async () => ({ tools: [...(catalog.listsMetaTools ? META_TOOLS : []), ...(await catalog.tools())] })),
  );

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
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
