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
import type { CallContext, Child, ChildEvents, ChildSchema, ChildStatus } from "../children/child.js";
import { GaggleError, resourceNotFound } from "../shared/errors.js";

/** One tool of a virtual child. Its arguments have been checked against `definition.inputSchema` already. */
export interface VirtualTool {
  definition: Tool;
  run(args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult>;
}

/** A tool definition whose arguments are an object of exactly these properties. */
export function toolDefinition(
  name: string,
  description: string,
  properties: Record<string, object>,
  required: string[],
  annotations: Tool["annotations"] = {},
): Tool {
  return { name, description, inputSchema: { type: "object", properties, required, additionalProperties: false }, annotations };
}

/**
 * A virtual child is always running: it has no process of its own and nothing to start. Subclasses give
 * their tools and resources, and stop whatever they started in `close()`.
 */
export abstract class VirtualChild implements Child {
  readonly kind = "virtual" as const;
  private readonly createdAt = new Date();
  private callsServed = 0;
  private inFlight = 0;

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

  /** Stops everything the child started; called on close_child_session and at shutdown. */
  protected abstract stopAll(): Promise<void>;

  status(): ChildStatus {
    return {
      state: "running",
      kind: "virtual",
      pid: null,
      startedAt: this.createdAt,
      restarts: 0,
      lastError: null,
      stderrTail: [],
      callsServed: this.callsServed,
      queue: { running: this.inFlight, waiting: 0 },
      toolCount: this.virtualTools.length,
    };
  }

  async tools(): Promise<Tool[]> {
    return this.virtualTools.map((tool) => tool.definition);
  }

  async schema(): Promise<ChildSchema> {
    return { tools: await this.tools(), resources: this.listResources(), resourceTemplates: this.listResourceTemplates(), prompts: [] };
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    const tool = this.virtualTools.find((candidate) => candidate.definition.name === name);
    if (!tool) throw new GaggleError("TOOL_NOT_FOUND", `${this.name} has no tool named "${name}"`, { hint: `call get_schema("${this.name}")` });
    this.inFlight++;
    try {
      return await tool.run(args, ctx);
    } finally {
      this.inFlight--;
      this.callsServed++;
    }
  }

  async readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    const result = await this.read(uri, ctx);
    if (!result) throw resourceNotFound(uri);
    return result;
  }

  async getPrompt(name: string): Promise<GetPromptResult> {
    throw new GaggleError("NOT_FOUND", `${this.name} has no prompt named "${name}"`);
  }

  async complete(): Promise<CompleteResult> {
    return { completion: { values: [] } };
  }

  /** Updates go to subscribers through ChildEvents.resourceUpdated; nothing to do per subscription. */
  async subscribe(): Promise<void> {}
  async unsubscribe(): Promise<void> {}
  async setLoggingLevel(): Promise<void> {}
  async start(): Promise<void> {}

  async close(): Promise<{ uptimeMs: number | null }> {
    await this.stopAll();
    return { uptimeMs: Date.now() - this.createdAt.getTime() };
  }
}
