// What each meta-tool does, on top of the router. Every failure becomes an isError result, never a thrown error.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext, Child } from "../children/child.js";
import { checkArguments } from "../children/arg-validator.js";
import type { Router } from "../children/router.js";
import { GaggleError } from "../shared/errors.js";
import { failureResult, jsonResult, refusedOrFailed } from "../shared/tool-results.js";
import { metaTool, type MetaToolArgs as Args, type MetaToolName } from "./meta-tools.js";
import { cutTextLines } from "./output.js";
import { formatUptime, statusView } from "./status-view.js";
import { schemaView, toolView } from "./schema-view.js";
import { ToolSearch } from "./tool-search.js";

export class MetaHandlers {
  constructor(private readonly router: Router) {}

  call(name: MetaToolName, rawArgs: unknown, ctx: CallContext): Promise<CallToolResult> {
    try {
      const args = rawArgs ?? {};
      const problem = checkArguments(metaTool(name), args);
      if (problem) {
        throw new GaggleError("INVALID_ARGS", `invalid arguments for ${name}: ${problem}`, {
          hint: `see the input schema of ${name} in tools/list`,
        });
      }
      return this.run(name, args, ctx).catch(refusedOrFailed);
    } catch (error) {
      return Promise.resolve(failureResult(error));
    }
  }

  private run(name: MetaToolName, args: unknown, ctx: CallContext): Promise<CallToolResult> {
    switch (name) {
      case "execute_child_tool":
        return this.execute(args as Args<"execute_child_tool">, ctx);
      case "get_schema":
        return this.schema(args as Args<"get_schema">);
      case "list_registered_children":
        return Promise.resolve(jsonResult({ children: this.router.names(), count: this.router.names().length }));
      case "get_child_status":
        return Promise.resolve(jsonResult(statusView(this.router.status((args as Args<"get_child_status">).server_id))));
      case "close_child_session":
        return this.close(args as Args<"close_child_session">);
      case "search_tools":
        return this.search(args as Args<"search_tools">);
    }
  }

  /**
   * Over the tools known without starting anything: running children's, the catalog's from their last run, the
   * built-in children's. Children whose tools nobody knows yet are named, with how to learn them.
   */
  private async search(args: Args<"search_tools">): Promise<CallToolResult> {
    const children = args.server_id === undefined ? this.router.all() : [this.router.get(args.server_id)];
    const unknown: string[] = [];
    const lists = await Promise.all(children.map((child) => knownTools(child)));
    const entries = children.flatMap((child, at) => {
      const tools = lists[at];
      if (!tools) unknown.push(child.name);
      return (tools ?? []).map((tool) => ({ serverId: child.name, tool }));
    });
    const hits = new ToolSearch(entries).search(args.query, { serverId: args.server_id, limit: args.limit ?? 10 });
    return jsonResult({
      query: args.query,
      hits,
      searched: { children: children.length - unknown.length, tools: entries.length },
      ...(unknown.length > 0 && {
        not_searched: {
          children: unknown,
          why: "they have not run yet, so their tools are not known; get_schema(server_id) starts one and lists them",
        },
      }),
    });
  }

  private execute(args: Args<"execute_child_tool">, ctx: CallContext): Promise<CallToolResult> {
    const result = this.router.callTool(args.server_id, args.tool_name, args.arguments, ctx);
    const { head, tail } = args;
    return head === undefined && tail === undefined ? result : result.then((whole) => cutTextLines(whole, { head, tail }));
  }

  private async schema(args: Args<"get_schema">): Promise<CallToolResult> {
    if (args.tool_name !== undefined) {
      const { tool } = await this.router.tool(args.server_id, args.tool_name);
      return jsonResult({ server_id: args.server_id, tool: toolView(tool) });
    }
    const child = this.router.get(args.server_id);
    return jsonResult({ server_id: child.name, ...schemaView(await child.schema()) });
  }

  private async close(args: Args<"close_child_session">): Promise<CallToolResult> {
    const { uptimeMs } = await this.router.get(args.server_id).close();
    return jsonResult({
      server_id: args.server_id,
      status: "closed",
      uptime: uptimeMs === null ? null : formatUptime(uptimeMs),
      uptime_ms: uptimeMs,
    });
  }
}

/**
 * A child's tools as known without starting it. A running child that announced a change has no list in hand
 * until it is asked again, and is asked then, since it runs anyway (server-everything announces one as it starts).
 */
async function knownTools(child: Child): Promise<Tool[] | undefined> {
  const known = child.known().tools;
  if (known || child.status().state !== "running") return known;
  return child.tools().catch(() => undefined);
}
