// What gaggle answers to each client request, whichever protocol era the client speaks: one table, two wires.
import {
  ErrorCode,
  type CallToolResult,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ListToolsResult,
  type ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallContext, Child } from "../children/child.js";
import { resourceNotFound, WireError } from "../shared/errors.js";
import type { Gaggle } from "./gaggle.js";
import { MetaHandlers } from "./meta-handlers.js";
import { answeredOrFailed } from "./wire-errors.js";
import { isMetaTool } from "./meta-tools.js";
import { GATEWAY_RESOURCES, readGatewayResource } from "./resources.js";

/**
 * The requests that reach the children, with the caller's context already made. Each era's server turns its
 * wire into these calls and their results (or thrown WireErrors and GaggleErrors) back into its wire.
 */
export class GatewayRequests {
  private readonly meta: MetaHandlers;

  constructor(private readonly gaggle: Gaggle) {
    this.meta = new MetaHandlers(gaggle.router);
  }

  async listTools(): Promise<ListToolsResult> {
    const { catalog } = this.gaggle;
    return { tools: [...catalog.metaTools, ...(await catalog.tools())] };
  }

  /**
   * A meta-tool, or a tool exposed under its own name. A child's error answer passes on as it is; any other
   * failure becomes an isError result (see answeredOrFailed); an unknown name is thrown (a JSON-RPC error). The
   * result is the child's as written: a gateway passes fields it does not know, and newer block types, on untouched.
   */
  callTool(name: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    const { catalog, router } = this.gaggle;
    if (isMetaTool(name) && catalog.listsMetaTools) return this.meta.call(name, args, ctx);
    return catalog.resolveTool(name).then((owned) => {
      if (!owned) throw new WireError(ErrorCode.InvalidParams, `Unknown tool: ${name}; tools/list shows the tools this gateway offers`);
      return router.callTool(owned.child.name, owned.item.name, args, ctx).catch(answeredOrFailed);
    });
  }

  async listResources(): Promise<ListResourcesResult> {
    return { resources: [...GATEWAY_RESOURCES, ...(await this.gaggle.catalog.resources())] };
  }

  async listResourceTemplates(): Promise<ListResourceTemplatesResult> {
    return { resourceTemplates: await this.gaggle.catalog.resourceTemplates() };
  }

  async readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    return readGatewayResource(uri, this.gaggle) ?? (await this.resourceOwner(uri)).readResource(uri, ctx);
  }

  /** The child that serves `uri`; a URI nobody offers is the spec's resource-not-found error. */
  async resourceOwner(uri: string): Promise<Child> {
    const child = await this.gaggle.catalog.resourceOwner(uri);
    if (!child) throw resourceNotFound(uri);
    return child;
  }

  async listPrompts(): Promise<ListPromptsResult> {
    return { prompts: await this.gaggle.catalog.prompts() };
  }

  async getPrompt(name: string, args: Record<string, string> | undefined, ctx: CallContext): Promise<GetPromptResult> {
    const { child, item } = await this.prompt(name);
    return child.getPrompt(item.name, args, ctx);
  }

  /** Routed to the child that owns the prompt or the resource template the completion is for. */
  async complete(params: CompleteRequest["params"], ctx: CallContext): Promise<CompleteResult> {
    const { ref } = params;
    if (ref.type === "ref/prompt") {
      const { child, item } = await this.prompt(ref.name);
      return child.complete({ ...params, ref: { ...ref, name: item.name } }, ctx);
    }
    const child = await this.gaggle.catalog.templateOwner(ref.uri);
    if (!child) throw new WireError(ErrorCode.InvalidParams, `No child offers the resource template ${ref.uri}`);
    return child.complete(params, ctx);
  }

  private async prompt(name: string) {
    const owned = await this.gaggle.catalog.resolvePrompt(name);
    if (!owned) throw new WireError(ErrorCode.InvalidParams, `Unknown prompt: ${name}; prompts/list shows the prompts this gateway offers`);
    return owned;
  }
}
