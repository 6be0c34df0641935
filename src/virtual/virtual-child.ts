// The base of every built-in virtual child: tools defined in code, answered through the same router as real children.
import type {
  CallToolResult,
  CompleteResult,
  GetPromptResult,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { LOCAL_PRINCIPAL, type BackgroundWork, type CallContext, type Child, type ChildSchema, type ChildStatus } from "../children/child.js";
import type { ChildEvents } from "../children/switchboard.js";
import { GaggleError, resourceNotFound } from "../shared/errors.js";
import { toolInputSchema } from "../shared/tool-schema.js";

/** One tool of a virtual child. Its arguments have been checked against `definition.inputSchema` already. */
export interface VirtualTool {
  definition: Tool;
  run(args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult>;
}

/** A tool as written: its arguments as a zod object, the one source of both its input schema and `run`'s argument type. */
export interface ToolSpec<Input extends z.ZodObject> {
  name: string;
  title?: string;
  description: string;
  /**
   * A `z.strictObject` (defineTool refuses any other), so that the input schema refuses properties it does not
   * name; no refinements, which JSON Schema cannot carry.
   */
  input: Input;
  annotations?: Tool["annotations"];
  /** Defaults are the handler's to apply: `args` is what the router's check passed, not a zod parse. */
  run(args: z.input<Input>, ctx: CallContext): Promise<CallToolResult>;
}

export function defineTool<Input extends z.ZodObject>(spec: ToolSpec<Input>): VirtualTool {
  const { name, title, description, input, annotations = {}, run } = spec;
  const inputSchema = toolInputSchema(input);
  // zod's types cannot tell a strict object from one that lets unknown properties through; its schema can.
  if (inputSchema.additionalProperties !== false) throw new Error(`the input of the built-in tool ${name} must be a z.strictObject`);
  return {
    definition: { name, ...(title !== undefined && { title }), description, inputSchema, annotations },
    // The router checked the arguments against this schema's JSON Schema, which accepts exactly what `input` does.
    run: (args, ctx) => run(args as z.input<Input>, ctx),
  };
}

/**
 * A built-in child is always running: it has no process of its own and nothing to start. Subclasses give
 * their tools and resources, and stop whatever they started in `stopAll()`.
 */
export abstract class VirtualChild implements Child {
  private readonly createdAt = new Date();
  private toolsByName: Map<string, VirtualTool> | undefined;
  /** The tool calls in flight, by the principal that owns what they start: the caller's, as each child's tools take it. */
  private readonly callsInFlight = new Map<string, Set<Promise<CallToolResult>>>();

  constructor(
    readonly name: string,
    readonly description: string,
    protected readonly events: ChildEvents,
  ) {}

  protected abstract readonly virtualTools: VirtualTool[];

  /** Concrete resources (e.g. `process://list`). */
  protected listResources(): Resource[] {
    return [];
  }

  protected listResourceTemplates(): ResourceTemplate[] {
    return [];
  }

  /** The contents of a resource, or undefined when the URI is not one of this child's. */
  protected async read(_uri: string, _ctx: CallContext): Promise<ReadResourceResult | undefined> {
    return undefined;
  }

  /** Stops everything the child started; called at shutdown, and on close_child_session when clients are not told apart. */
  protected abstract stopAll(): Promise<void>;

  /**
   * close_child_session by one of several principals: stops only what `principal` started. A child whose state
   * every client shares refuses, rather than end other clients' work.
   */
  protected async stopOwnedBy(principal: string): Promise<void> {
    throw new GaggleError(
      "PERMISSION_DENIED",
      `the ${this.name} child is shared by every client: closing it would end other clients' work too, so ${JSON.stringify(principal)} cannot close it`,
      { hint: "it closes when gaggle stops; a configured server of your own can be closed with close_child_session" },
    );
  }

  status(): ChildStatus {
    return {
      state: "running",
      kind: "virtual",
      pid: null,
      startedAt: this.createdAt,
      restarts: 0,
      lastError: null,
      needsAuth: false,
      stderrTail: [],
      stdoutNoise: { lines: 0, recent: [] },
      toolCount: this.virtualTools.length,
      protocol: null,
    };
  }

  async tools(): Promise<Tool[]> {
    return this.virtualTools.map((tool) => tool.definition);
  }

  knownTool(name: string): Tool | undefined {
    return this.byName().get(name)?.definition;
  }

  /** A built-in child's lists are always known: it runs inside gaggle. */
  known(): Partial<ChildSchema> {
    return {
      tools: this.virtualTools.map((tool) => tool.definition),
      resources: this.listResources(),
      resourceTemplates: this.listResourceTemplates(),
      prompts: [],
    };
  }

  async schema(): Promise<ChildSchema> {
    return { tools: await this.tools(), resources: this.listResources(), resourceTemplates: this.listResourceTemplates(), prompts: [] };
  }

  callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    const tool = this.byName().get(name);
    if (!tool)
      return Promise.reject(new GaggleError("TOOL_NOT_FOUND", `${this.name} has no tool named "${name}"`, { lookup: { server: this.name } }));
    const owner = ctx.caller?.principal ?? LOCAL_PRINCIPAL;
    const call = tool.run(args, ctx);
    let calls = this.callsInFlight.get(owner);
    if (!calls) this.callsInFlight.set(owner, (calls = new Set()));
    calls.add(call);
    const ended = () => {
      calls.delete(call);
      if (calls.size === 0 && this.callsInFlight.get(owner) === calls) this.callsInFlight.delete(owner);
    };
    call.then(ended, ended);
    return call;
  }

  /**
   * The tool calls of `principal` in flight now. A call may start work after close(principal) stopped its owner's
   * (its await ends later): whoever stops a principal for good waits for these, then closes it again.
   */
  callsOf(principal: string): Promise<CallToolResult>[] {
    return [...(this.callsInFlight.get(principal) ?? [])];
  }

  async readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    const result = await this.read(uri, ctx);
    if (!result) throw resourceNotFound(uri);
    return result;
  }

  /** A built-in child offers no prompts. */
  async getPrompt(name: string): Promise<GetPromptResult> {
    throw new GaggleError("NOT_FOUND", `${this.name} has no prompt named "${name}"`);
  }

  /** Nothing of a built-in child takes completions: it has no prompts, and its resource templates take ids it issued. */
  async complete(): Promise<CompleteResult> {
    return { completion: { values: [] } };
  }

  /** A built-in child reports every change of its resources through ChildEvents; the hub sends each to its subscribers. */
  async subscribe(): Promise<void> {}
  async unsubscribe(): Promise<void> {}

  /** A built-in child's resources belong to the principal whose work they show: only one who may read it follows it. */
  async checkFollower(uri: string, ctx: CallContext): Promise<void> {
    await this.readResource(uri, ctx);
  }

  /** Children that start work which outlives a call (processes, goslings, teams) list it. */
  background(): BackgroundWork[] {
    return [];
  }

  async close(principal?: string): Promise<{ uptimeMs: number | null }> {
    if (principal === undefined) await this.stopAll();
    else await this.stopOwnedBy(principal);
    return { uptimeMs: Date.now() - this.createdAt.getTime() };
  }

  /** The child's tools are `virtualTools` as it now holds them (an edit of the config changed them): clients are told. */
  protected toolsReplaced(): void {
    this.toolsByName = undefined;
    this.events.listChanged(this.name, "tools");
  }

  private byName(): Map<string, VirtualTool> {
    this.toolsByName ??= new Map(this.virtualTools.map((tool) => [tool.definition.name, tool]));
    return this.toolsByName;
  }
}
