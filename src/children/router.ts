// server_id -> Child, and the one path every tool call takes: find the child, find the tool, check arguments, call.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { nearest } from "../config/index.js";
import { GaggleError } from "../shared/errors.js";
import { logger } from "../shared/log.js";
import { checkArguments } from "./arg-validator.js";
import type { CallContext, Child } from "./child.js";

export class Router {
  private readonly children = new Map<string, Child>();

  constructor(children: Iterable<Child>) {
    for (const child of children) this.children.set(child.name, child);
  }

  names(): string[] {
    return [...this.children.keys()];
  }

  all(): Child[] {
    return [...this.children.values()];
  }

  get(serverId: string): Child {
    const child = this.children.get(serverId);
    if (child) return child;
    const guess = nearest(serverId, this.names());
    throw new GaggleError("SERVER_NOT_FOUND", `no child server named "${serverId}"`, {
      hint: guess ? `did you mean "${guess}"? list_registered_children lists every name` : `known children: ${this.names().join(", ") || "none"}`,
    });
  }

  async tool(serverId: string, toolName: string): Promise<{ child: Child; tool: Tool }> {
    const child = this.get(serverId);
    const tools = await child.tools();
    const tool = tools.find((candidate) => candidate.name === toolName);
    if (tool) return { child, tool };
    const guess = nearest(
      toolName,
      tools.map((candidate) => candidate.name),
    );
    throw new GaggleError("TOOL_NOT_FOUND", `${serverId} has no tool named "${toolName}"`, {
      hint: `${guess ? `did you mean "${guess}"? ` : ""}call get_schema("${serverId}") for its tools`,
    });
  }

  /**
   * Arguments that do not fit the tool's input schema never reach the child. That they are an object (or
   * absent) is checked where they are read: the tools/call lane, or the meta-tool's own schema.
   */
  callTool(serverId: string, toolName: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    try {
      // A tool the child's cached list already holds is called without awaiting anything first.
      const child = this.get(serverId);
      const known = child.knownTool?.(toolName);
      if (known) return this.checkedCall(child, known, args, ctx);
      return this.tool(serverId, toolName).then(({ tool }) => this.checkedCall(child, tool, args, ctx));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private checkedCall(child: Child, tool: Tool, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    const given = args ?? {};
    const problem = checkArguments(tool, given);
    if (problem) {
      const error = new GaggleError("INVALID_ARGS", `invalid arguments for ${child.name}.${tool.name}: ${problem}`, {
        hint: `call get_schema("${child.name}", "${tool.name}") for its input schema`,
      });
      return Promise.reject(error);
    }
    return child.callTool(tool.name, given, ctx);
  }

  /** Starts the children configured with `startup = "eager"`; a failure is recorded in its status, not thrown. */
  startEager(eager: Set<string>): void {
    for (const child of this.children.values()) {
      if (!eager.has(child.name)) continue;
      child.start().catch((error: unknown) => logger({ child: child.name }).warn({ err: error }, "eager start failed"));
    }
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.children.values()].map((child) => child.close()));
  }
}
