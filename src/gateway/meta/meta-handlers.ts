// What each meta-tool does, on top of the router. Every failure becomes an isError result; only a refusal of the request is thrown.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { LOCAL_PRINCIPAL, resultRead, type CallContext, type Child } from "../../children/child.js";
import { checkArguments } from "../../children/calls/arg-validator.js";
import type { Router } from "../../children/router.js";
import { GaggleError } from "../../shared/errors.js";
import { isObject } from "../../shared/json.js";
import { timerDelay } from "../../shared/timer-delay.js";
import { jsonResult, refusedOrFailed } from "../../shared/tool-results.js";
import { META_WORDING, metaTool, type MetaToolArgs as Args, type MetaToolName, type Wording } from "./meta-tools.js";
import { cutTextLines } from "./output.js";
import { formatUptime, statusView, stderrView } from "./status-view.js";
import { schemaView, toolView } from "./schema-view.js";
import { ToolSearch } from "./tool-search.js";

/** The surface the meta-tools answer on. */
export interface MetaHandlerOptions {
  /** How hints speak to the caller (the meta-tools' words by default); asked at each answer, as a reload may change the tools listed. */
  wording?: () => Wording;
  /** How long search_tools waits for children that are starting and whose tools nobody knows yet (none by default); asked at each search. */
  waitMs?: () => number;
  /** Whether a child is built in: its tools are known without any run, so finding only them is a cold search. */
  builtIn?: (name: string) => boolean;
  /** Why the config file is not the config in force; shown with the children while it is not. */
  configErrors?: () => string[];
  /** The tool listed to sign in to a child that needs it (proxy and search modes); none elsewhere. */
  signInTool?: (name: string) => string | undefined;
  /** The shell command that signs in to a child (see signInCommand); without the config file's name by default. */
  signInCommand?: (name: string) => string;
  /**
   * Whether clients are told apart by named tokens: close_child_session then closes only the caller's part of a
   * built-in child. Otherwise every client is the same person, and it closes the child whole. Asked at each close:
   * the tokens follow the config in force.
   */
  principals?: () => boolean;
}

export class MetaHandlers {
  private readonly wording: () => Wording;
  private readonly waitMs: () => number;
  private readonly builtIn: (name: string) => boolean;
  private readonly configErrors: () => string[];
  private readonly signInTool: (name: string) => string | undefined;
  private readonly signInCommand: (name: string) => string;
  private readonly principals: () => boolean;

  constructor(
    private readonly router: Router,
    options: MetaHandlerOptions = {},
  ) {
    this.wording = options.wording ?? (() => META_WORDING);
    this.waitMs = options.waitMs ?? (() => 0);
    this.builtIn = options.builtIn ?? (() => false);
    this.configErrors = options.configErrors ?? (() => []);
    this.signInTool = options.signInTool ?? (() => undefined);
    this.signInCommand = options.signInCommand ?? ((name) => `gaggle auth login ${name}`);
    this.principals = options.principals ?? (() => false);
  }

  /** A meta-tool's answer: any failure is an isError result, and only a refusal of the request is thrown on (see failed). */
  call(name: MetaToolName, rawArgs: unknown, ctx: CallContext): Promise<CallToolResult> {
    return this.start(name, rawArgs, ctx).catch((error: unknown) => {
      ctx.operation?.failed(error);
      return this.failed(error);
    });
  }

  /**
   * The meta-tool as it runs, its failures the promise's rejections, which `failed` makes what `call` answers: for a
   * caller that hears of a failure anyway (ClientConnection), with no promise between the child's answer and it.
   */
  start(name: MetaToolName, rawArgs: unknown, ctx: CallContext): Promise<CallToolResult> {
    try {
      const args = rawArgs ?? {};
      // execute_child_tool, the meta-tool of nearly every call, is told apart here rather than in run's switch: run
      // is called too seldom for V8 to optimize it, and would be run as slower, larger unoptimized code on every call.
      const execute = name === "execute_child_tool";
      const problem = execute && plainExecuteArgs(args) ? undefined : checkArguments(metaTool(name), args);
      if (problem) {
        throw new GaggleError("INVALID_ARGS", `invalid arguments for ${name}: ${problem}`, {
          hint: `see the input schema of ${name} in tools/list`,
        });
      }
      return execute
        ? this.execute(args as Args<"execute_child_tool">, ctx)
        : this.run(name as Exclude<MetaToolName, "execute_child_tool">, args, ctx);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** What a meta-tool that failed answers: an isError result, worded for the caller; a refusal of the request is thrown on. */
  failed(error: unknown): CallToolResult {
    return refusedOrFailed(error, this.wording().lookup);
  }

  private run(name: Exclude<MetaToolName, "execute_child_tool">, args: unknown, ctx: CallContext): Promise<CallToolResult> {
    switch (name) {
      case "get_schema":
        return this.schema(args as Args<"get_schema">);
      case "list_registered_children":
        return Promise.resolve(jsonResult({ children: this.router.names(), count: this.router.names().length, ...this.configErrorsField() }));
      case "get_child_status":
        return Promise.resolve(this.childStatus((args as Args<"get_child_status">).server_id));
      case "close_child_session":
        return this.close(args as Args<"close_child_session">, ctx);
      case "search_tools":
        return this.search(args as Args<"search_tools">);
    }
  }

  private configErrorsField(): { config_errors?: string[] } {
    const errors = this.configErrors();
    return errors.length > 0 ? { config_errors: errors } : {};
  }

  /** A child that is not there while the config does not load may be one of the file's: the answer says why it is missing. */
  private childStatus(serverId: string): CallToolResult {
    try {
      return jsonResult({ ...statusView(this.router.status(serverId)), ...this.configErrorsField() });
    } catch (error) {
      const errors = this.configErrors();
      if (errors.length === 0 || !(error instanceof GaggleError)) throw error;
      throw new GaggleError(error.code, `${error.message}; the config file does not load, so its children are not served: ${errors.join("; ")}`, {
        hint: "fix the config file; gaggle applies it without a reconnect",
      });
    }
  }

  /**
   * Over the tools known without starting anything: running children's, the catalog's from their last run, the
   * built-in children's; a child being started is waited for, at most `waitMs` for all. Children whose tools are
   * still unknown are named, with how to learn them. When the only children searched are built in, the search is
   * cold: it says so, with no hits, rather than ranking the built-in tools as the best match for anything.
   * Children that need a person to sign in are named in `needs_sign_in`, with how.
   */
  private async search(args: Args<"search_tools">): Promise<CallToolResult> {
    const children = args.server_id === undefined ? this.router.all() : [this.router.get(args.server_id)];
    const unknown: string[] = [];
    const lists = await knownToolsWithin(children, this.waitMs());
    const entries = children.flatMap((child, at) => {
      const tools = lists[at];
      if (!tools) unknown.push(child.name);
      return (tools ?? []).map((tool) => ({ serverId: child.name, tool }));
    });
    const signIns = children.filter((child) => child.status().needsAuth).map((child) => this.signInOf(child));
    const failed = children.filter((child) => unknown.includes(child.name) && hasFailed(child));
    const notRun = unknown.filter((name) => !failed.some((child) => child.name === name));
    const cold = unknown.length > 0 && children.every((child) => unknown.includes(child.name) || this.builtIn(child.name));
    const hits = cold ? [] : new ToolSearch(entries).search(args.query, { serverId: args.server_id, limit: args.limit ?? 10 });
    const coldWhy =
      notRun.length > 0
        ? `no child whose tools are learned by running it has run yet, so there is nothing to rank: ${this.wording().notRun}`
        : "no child whose tools are learned by running it could start, so there is nothing to rank: failed says why";
    return jsonResult({
      query: args.query,
      ...(cold && { cold: coldWhy }),
      hits,
      searched: { children: children.length - unknown.length, tools: entries.length },
      ...(notRun.length > 0 && {
        not_searched: { children: notRun, why: `they have not run yet, so their tools are not known; ${this.wording().notRun}` },
      }),
      ...(failed.length > 0 && { failed: failed.map(failureOf) }),
      ...(signIns.length > 0 && { needs_sign_in: signIns }),
    });
  }

  /** A child that needs a person to sign in, and how: its sign-in tool where one is listed, else a call or the shell. */
  private signInOf(child: Child): { server_id: string; how: string } {
    const tool = this.signInTool(child.name);
    const how = tool
      ? `call ${tool}, which sends you to its sign-in page; its tools are searched once you have signed in`
      : `calling one of its tools asks you to sign in where your client can open a page; else run: ${this.signInCommand(child.name)}`;
    return { server_id: child.name, how };
  }

  private execute(args: Args<"execute_child_tool">, ctx: CallContext): Promise<CallToolResult> {
    const { head, tail } = args;
    if (head === undefined && tail === undefined) return this.router.callTool(args.server_id, args.tool_name, args.arguments, ctx);
    const result = this.router.callTool(args.server_id, args.tool_name, args.arguments, resultRead(ctx));
    return result.then((whole) => cutTextLines(whole, { head, tail }));
  }

  private async schema(args: Args<"get_schema">): Promise<CallToolResult> {
    if (args.tool_name !== undefined) {
      const { tool } = await this.router.tool(args.server_id, args.tool_name);
      return jsonResult({ server_id: args.server_id, tool: toolView(tool) });
    }
    const child = this.router.get(args.server_id);
    return jsonResult({ server_id: child.name, ...schemaView(await child.schema()) });
  }

  private async close(args: Args<"close_child_session">, ctx: CallContext): Promise<CallToolResult> {
    const by = this.principals() ? (ctx.caller?.principal ?? LOCAL_PRINCIPAL) : undefined;
    const { uptimeMs } = await this.router.get(args.server_id).close(by, "asked");
    return jsonResult({
      server_id: args.server_id,
      status: "closed",
      uptime: uptimeMs === null ? null : formatUptime(uptimeMs),
      uptime_ms: uptimeMs,
    });
  }
}

/**
 * Whether execute_child_tool's arguments have the shape nearly every call gives them, which its input schema takes:
 * a non-empty server_id and tool_name, and arguments an object or absent, nothing else. Any other shape (head or tail
 * among them) is checked against the schema, which says what is wrong. Cheaper than the schema's validator on
 * every call, and never more lenient (test/gateway/meta/plain-execute-args.test.ts holds the two to each other).
 */
export function plainExecuteArgs(args: unknown): boolean {
  if (!isObject(args)) return false;
  for (const key in args) if (key !== "server_id" && key !== "tool_name" && key !== "arguments") return false;
  const { server_id: server, tool_name: tool, arguments: inner } = args;
  return typeof server === "string" && server !== "" && typeof tool === "string" && tool !== "" && (inner === undefined || isObject(inner));
}

/** A child that failed for a reason of its own (not a sign-in): searching again will not find its tools until that is fixed. */
function hasFailed(child: Child): boolean {
  const { state, needsAuth } = child.status();
  return state === "failed" && !needsAuth;
}

/** Why a child failed, with its newest stderr lines as get_child_status shows them: in search mode nothing else does. */
function failureOf(child: Child): { server_id: string; error: string | null; stderr: string[] } {
  const { lastError, stderrTail } = child.status();
  return { server_id: child.name, error: lastError, stderr: stderrView(stderrTail) };
}

/**
 * Each child's tools as known without starting it; undefined where unknown. A running child that announced a
 * change has no list in hand until it is asked again, and is asked then, since it runs anyway (server-everything
 * announces one as it starts); a child being started is waited for, since its list comes with its start, at most
 * `waitMs` for all of them.
 */
async function knownToolsWithin(children: Child[], waitMs: number): Promise<Array<Tool[] | undefined>> {
  let timer: NodeJS.Timeout | undefined;
  // Unref: a search waiting out its bound must not keep a stopping gaggle alive.
  const deadline = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, timerDelay(waitMs), undefined).unref()));
  try {
    return await Promise.all(
      children.map((child) => {
        const known = child.known().tools;
        const { state } = child.status();
        if (known || (state !== "running" && state !== "starting")) return known;
        const asked = child.tools().catch(() => undefined);
        return state === "running" ? asked : Promise.race([asked, deadline]);
      }),
    );
  } finally {
    clearTimeout(timer);
  }
}
