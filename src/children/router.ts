// server_id -> Child, and the one path every tool call takes, to every child: find the tool, check arguments, queue, call.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { nearest } from "../shared/suggest.js";
import { GaggleError } from "../shared/errors.js";
import { logger } from "../shared/log.js";
import { checkArguments } from "./arg-validator.js";
import { holding } from "./call-hold.js";
import { CallQueue } from "./call-queue.js";
import type { CallContext, Child, ChildStatus, QueueDepth } from "./child.js";

/** A child as the router takes it: how many of its calls may run at once (the rest wait their turn). */
export interface RoutedChild {
  child: Child;
  concurrency: number;
}

/** A child's status with what the router counts of its calls. */
export interface RoutedStatus extends ChildStatus {
  name: string;
  /** Calls that reached the child, whatever their outcome. */
  callsServed: number;
  queue: QueueDepth;
}

interface Slot {
  child: Child;
  queue: CallQueue;
  served: number;
}

export class Router {
  private readonly slots = new Map<string, Slot>();

  constructor(children: Iterable<RoutedChild>) {
    for (const { child, concurrency } of children) this.slots.set(child.name, { child, queue: new CallQueue(concurrency), served: 0 });
  }

  names(): string[] {
    return [...this.slots.keys()];
  }

  all(): Child[] {
    return [...this.slots.values()].map((slot) => slot.child);
  }

  get(serverId: string): Child {
    return this.slot(serverId).child;
  }

  status(serverId: string): RoutedStatus {
    const { child, queue, served } = this.slot(serverId);
    return { name: child.name, ...child.status(), callsServed: served, queue: { running: queue.running, waiting: queue.waiting } };
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
   * Arguments that do not fit the tool's input schema never reach the child, and a call reaches it only when
   * its queue has a slot free. That the arguments are an object (or absent) is checked where they are read:
   * the tools/call lane, or the meta-tool's own schema.
   */
  callTool(serverId: string, toolName: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    try {
      // A tool the child's cached list already holds is called without awaiting anything first.
      const slot = this.slot(serverId);
      const known = slot.child.knownTool(toolName);
      if (known) return this.checkedCall(slot, known, args, ctx);
      return this.tool(serverId, toolName).then(({ tool }) => this.checkedCall(slot, tool, args, ctx));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private checkedCall(slot: Slot, tool: Tool, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    const { child, queue } = slot;
    const given = args ?? {};
    const problem = checkArguments(tool, given);
    if (problem) {
      const error = new GaggleError("INVALID_ARGS", `invalid arguments for ${child.name}.${tool.name}: ${problem}`, {
        hint: `call get_schema("${child.name}", "${tool.name}") for its input schema`,
      });
      return Promise.reject(error);
    }
    ctx.queue = queue;
    const call = () => {
      slot.served++;
      return child.callTool(tool.name, given, ctx);
    };
    if (ctx.holds) return holding(() => queue.admit(ctx.cancel), ctx.holds, call);
    return queue.run(call, ctx.cancel);
  }

  /** Starts these children and fetches their tools, in the background; a failure is recorded in its status, not thrown. */
  warmUp(names: Iterable<string>): void {
    for (const name of names) {
      const child = this.get(name);
      child.tools().catch((error: unknown) => logger({ child: name }).warn({ err: error }, "eager start failed"));
    }
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled(this.all().map((child) => child.close()));
  }

  private slot(serverId: string): Slot {
    const slot = this.slots.get(serverId);
    if (slot) return slot;
    const guess = nearest(serverId, this.names());
    throw new GaggleError("SERVER_NOT_FOUND", `no child server named "${serverId}"`, {
      hint: guess ? `did you mean "${guess}"? list_registered_children lists every name` : `known children: ${this.names().join(", ") || "none"}`,
    });
  }
}
