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
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { contextWith, LOCAL_PRINCIPAL, type CallContext, type Child } from "../children/child.js";
import { resourceNotFound, WireError } from "../shared/errors.js";
import { nearest } from "../shared/suggest.js";
import { signInCommand } from "../children/oauth/sign-in-command.js";
import { failureOutcome, resultOutcome, type ClientRequest } from "../shared/observer.js";
import type { Gaggle } from "./gaggle.js";
import type { Owned } from "./proxy/proxy-catalog.js";
import { MetaHandlers } from "./meta/meta-handlers.js";
import { answeredOrFailed, toWireError } from "./wire-errors.js";
import { metaToolName, type MetaToolName } from "./meta/meta-tools.js";
import { GATEWAY_RESOURCES, readGatewayResource } from "./resources.js";
import { authenticate } from "./proxy/sign-in-tool.js";

/**
 * The requests that reach the children, with the caller's context already made. Each era's server turns its
 * wire into these calls and their results (or thrown WireErrors and GaggleErrors) back into its wire.
 */
export class GatewayRequests {
  private readonly meta: MetaHandlers;

  constructor(private readonly gaggle: Gaggle) {
    const { catalog } = gaggle;
    this.meta = new MetaHandlers(gaggle.router, {
      wording: () => catalog.wording,
      waitMs: () => gaggle.config.gateway.listWaitMs,
      builtIn: (name) => catalog.isBuiltIn(name),
      configErrors: () => gaggle.configErrors(),
      signInTool: (name) => catalog.signInToolName(name),
      signInCommand: (name) => signInCommand({ name, configFile: gaggle.config.path }),
      principals: () => Object.keys(gaggle.config.gateway.authTokens ?? {}).length > 0,
    });
  }

  /** `client` is the name the client gave in initialize, when it is known: some clients list only once. */
  async listTools(client?: string): Promise<ListToolsResult> {
    const { catalog, config } = this.gaggle;
    const waitMs = client === undefined ? undefined : config.gateway.listWaitMsByClient[client];
    const tools = waitMs === undefined ? await catalog.tools() : await catalog.toolsWaiting(waitMs);
    return { tools: [...catalog.metaTools, ...tools] };
  }

  /**
   * A meta-tool, or a tool exposed under its own name. A failure of the call is answered as callFailed says (an
   * isError result, or a child's error answer passed on as it is); an unknown name is thrown (a JSON-RPC error). The
   * result is the child's as written: a gateway passes fields it does not know, and newer block types, on untouched.
   */
  callTool(name: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    if (this.gaggle.observer)
      return this.observed({ method: "tools/call", name, uri: undefined, arguments: args }, ctx, (seen) => this.answered(name, args, seen));
    return this.answered(name, args, ctx);
  }

  /**
   * callTool for a caller that hears of a failure anyway (ClientConnection): the call's own promise, a failure of the
   * call its rejection, which callFailed makes what callTool answers; no promise between the child's answer and the
   * caller. An observed call is callTool's, its failures already answered: its record holds the result.
   */
  startCall(name: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    return this.gaggle.observer ? this.callTool(name, args, ctx) : this.callToolAs(name, args, ctx);
  }

  /**
   * What a tools/call of `name` answers for a failure of the call: a meta-tool's, or a child's tool's (see
   * answeredOrFailed), by the tools listed when it failed. A refusal of the request is thrown on, to be a JSON-RPC
   * error; one already answered is a refusal.
   */
  callFailed(name: string, error: unknown): CallToolResult {
    return this.listedMetaTool(name) ? this.meta.failed(error) : answeredOrFailed(error, this.gaggle.catalog.wording.lookup);
  }

  private answered(name: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    return this.callToolAs(name, args, ctx).catch((error: unknown) => {
      ctx.operation?.failed(error);
      return this.callFailed(name, error);
    });
  }

  /** The call; a failure of the call (not of finding its tool) is a rejection callFailed answers. */
  private callToolAs(name: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    const { catalog } = this.gaggle;
    const meta = this.listedMetaTool(name);
    if (meta) return this.meta.start(meta, args, ctx);
    // A tool of the built index is called at once; any other name waits for the index, or for a child's late list.
    const built = catalog.builtTool(name);
    if (built) return this.callOwned(built, args, ctx);
    return this.resolved(name).then((owned) => this.callOwned(owned, args, ctx));
  }

  /** The meta-tool `name` is, while the meta-tools are listed (in proxy mode a child's tool may be exposed as one). */
  private listedMetaTool(name: string): MetaToolName | undefined {
    const meta = metaToolName(name);
    return meta && this.gaggle.catalog.listsMetaTools ? meta : undefined;
  }

  /** The tool exposed as `name`, once the index or a child's late list has it; not finding it refuses the request. */
  private async resolved(name: string): Promise<Owned<Tool>> {
    const { catalog } = this.gaggle;
    let owned: Owned<Tool> | undefined;
    try {
      owned = await catalog.resolveTool(name);
    } catch (error) {
      throw toWireError(error);
    }
    if (owned) return owned;
    const unlisted = catalog.unlistedOwnerOf(name);
    const failure = unlisted?.status().lastError;
    if (unlisted && failure)
      throw new WireError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${name}; its child ${unlisted.name} has not listed its tools: ${failure}. \`gaggle doctor ${unlisted.name}\` starts it and shows its stderr`,
      );
    const guess = nearest(name, catalog.builtToolNames());
    const hint = guess ? `did you mean "${guess}"? ` : "";
    throw new WireError(ErrorCode.InvalidParams, `Unknown tool: ${name}; ${hint}tools/list shows the tools this gateway offers`);
  }

  private callOwned(owned: Owned<Tool>, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    const { catalog, router } = this.gaggle;
    return catalog.isSignInTool(owned)
      ? authenticate(router, owned.child, ctx, signInCommand({ name: owned.child.name, configFile: this.gaggle.config.path }))
      : router.call(owned.child, owned.item, args, ctx);
  }

  async listResources(): Promise<ListResourcesResult> {
    return { resources: [...GATEWAY_RESOURCES, ...(await this.gaggle.catalog.resources())] };
  }

  async listResourceTemplates(): Promise<ListResourceTemplatesResult> {
    return { resourceTemplates: await this.gaggle.catalog.resourceTemplates() };
  }

  readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    if (this.gaggle.observer)
      return this.observed({ method: "resources/read", name: undefined, uri, arguments: undefined }, ctx, (seen) => this.readResourceAs(uri, seen));
    return this.readResourceAs(uri, ctx);
  }

  private async readResourceAs(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    const own = readGatewayResource(uri, this.gaggle);
    if (own) return own;
    const child = await this.resourceOwner(uri);
    ctx.operation?.routed(child.name);
    return child.readResource(uri, ctx);
  }

  /** The child that serves `uri`, once it has let this caller follow it (see Child.checkFollower). */
  async followedOwner(uri: string, ctx: CallContext): Promise<Child> {
    const child = await this.resourceOwner(uri);
    await child.checkFollower?.(uri, ctx);
    return child;
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

  getPrompt(name: string, args: Record<string, string> | undefined, ctx: CallContext): Promise<GetPromptResult> {
    if (this.gaggle.observer)
      return this.observed({ method: "prompts/get", name, uri: undefined, arguments: args }, ctx, (seen) => this.getPromptAs(name, args, seen));
    return this.getPromptAs(name, args, ctx);
  }

  private async getPromptAs(name: string, args: Record<string, string> | undefined, ctx: CallContext): Promise<GetPromptResult> {
    const { child, item } = await this.prompt(name);
    ctx.operation?.routed(child.name, item.name);
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

  /**
   * Runs a request as one observed operation, its context carrying it down to the children; what it answers or
   * throws ends it. Only taken when something observes gaggle: otherwise a request costs nothing more.
   */
  private observed<T>(
    request: { [K in "method" | "name" | "uri" | "arguments"]-?: ClientRequest[K] },
    ctx: CallContext,
    run: (ctx: CallContext) => Promise<T>,
  ): Promise<T> {
    const { caller } = ctx;
    // Written member by member, as the context below: a literal that spreads another defines each member after the
    // spread the slow way, on every request.
    const operation = this.gaggle.observer!.clientRequest({
      method: request.method,
      name: request.name,
      uri: request.uri,
      arguments: request.arguments,
      session: caller?.sessionId ?? "local",
      principal: caller?.principal ?? LOCAL_PRINCIPAL,
      transport: caller?.sessionId === "stdio" ? "pipe" : "tcp",
      client: caller?.client,
      protocol: caller?.protocol,
      meta: ctx.meta,
      cancel: ctx.cancel,
    });
    let answer: Promise<T>;
    try {
      answer = run(contextWith(ctx, operation, ctx.meta));
    } catch (error) {
      answer = Promise.reject(error);
    }
    return answer.then(
      (result) => {
        operation.end(resultOutcome(result));
        return result;
      },
      (error: unknown) => {
        operation.end(failureOutcome(error));
        throw error;
      },
    );
  }

  private async prompt(name: string) {
    const owned = await this.gaggle.catalog.resolvePrompt(name);
    if (!owned) throw new WireError(ErrorCode.InvalidParams, `Unknown prompt: ${name}; prompts/list shows the prompts this gateway offers`);
    return owned;
  }
}
