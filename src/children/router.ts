// server_id -> Child, and the one path every tool call takes, to every child: find the tool, check arguments, queue, call.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { nearest } from "../shared/suggest.js";
import { GaggleError } from "../shared/errors.js";
import { logger } from "../shared/log.js";
import { checkArguments } from "./calls/arg-validator.js";
import { turnTimeout } from "./calls/call-failure.js";
import { holding } from "./calls/call-hold.js";
import { CallQueue } from "./calls/call-queue.js";
import { CallTurn, inLine } from "./calls/call-turn.js";
import type { CallContext, Child, ChildStatus, QueueDepth, UrlOpener } from "./child.js";

/** A child as the router takes it: how many of its calls may run at once (the rest wait their turn). */
export interface RoutedChild {
  child: Child;
  concurrency: number;
  /**
   * How long a tools/call has, counted from when it arrives here: waiting its turn uses it up too. None for a
   * child whose tools keep their own limits (the built-in ones).
   */
  timeoutMs?: number;
  /** For a child that may need a person to sign in: signs in through a client that can open URLs. */
  signIn?: SignInThrough;
}

export type SignInThrough = (urls: UrlOpener, signal?: AbortSignal) => Promise<void>;

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
  signIn: SignInThrough | undefined;
  timeoutMs: number | undefined;
}

export class Router {
  private readonly slots = new Map<string, Slot>();

  constructor(children: Iterable<RoutedChild>) {
    for (const routed of children) this.put(routed);
  }

  /**
   * Routes to `routed.child` from now on, in place of any child of that name; returns the child it replaced (for
   * the caller to close). Calls already in the old child's queue stay there and end with it.
   */
  put({ child, concurrency, signIn, timeoutMs }: RoutedChild): Child | undefined {
    const before = this.slots.get(child.name)?.child;
    this.slots.set(child.name, { child, queue: new CallQueue(concurrency), served: 0, signIn, timeoutMs });
    return before;
  }

  /** Stops routing to the child of that name; returns it (for the caller to close), or undefined if none was routed. */
  remove(name: string): Child | undefined {
    const before = this.slots.get(name)?.child;
    this.slots.delete(name);
    return before;
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
      ...(guess && { hint: `did you mean "${guess}"?` }),
      lookup: { server: serverId },
    });
  }

  /**
   * Arguments that do not fit the tool's input schema never reach the child, and a call reaches it only when
   * its queue has a slot free: one whose time runs out first leaves the queue with TIMEOUT. That the arguments
   * are an object (or absent) is checked where they are read: the tools/call lane, or the meta-tool's own schema.
   */
  callTool(serverId: string, toolName: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    const once = () => this.callToolOnce(serverId, toolName, args, ctx);
    const signIn = this.slots.get(serverId)?.signIn;
    return signIn ? once().catch((error: unknown) => signInAndRetry(error, signIn, ctx, once)) : once();
  }

  private callToolOnce(serverId: string, toolName: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    try {
      // A tool the child's cached list already holds is called without awaiting anything first.
      const slot = this.slot(serverId);
      ctx.operation?.routed(serverId, toolName);
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
        lookup: { server: child.name, tool: tool.name },
      });
      return Promise.reject(error);
    }
    ctx.queue = queue;
    const { timeoutMs } = slot;
    const turn =
      timeoutMs === undefined ? undefined : new CallTurn(timeoutMs, (queuedMs) => turnTimeout(child.name, tool.name, timeoutMs, queuedMs, queue));
    if (turn) ctx.turn = turn;
    const call = () => {
      turn?.checkTimeLeft();
      slot.served++;
      return child.callTool(tool.name, given, ctx);
    };
    if (ctx.holds) return holding(() => inLine(turn, ctx.cancel, (cancel) => queue.admit(cancel)), ctx.holds, call);
    // Most calls find room: they start at once, without a timer for a wait they do not have.
    if (!turn || queue.hasRoom) return queue.run(call, ctx.cancel);
    const wait = turn.waiting(ctx.cancel);
    return queue.run(() => {
      wait.admitted();
      return call();
    }, wait.cancel);
  }

  /**
   * Starts these children and fetches their tools, then their other lists (so that the catalog holds every list
   * for the next run), in the background; a failure is recorded in its status, not thrown.
   */
  warmUp(names: Iterable<string>): void {
    for (const name of names) {
      const child = this.get(name);
      child
        .tools()
        .then(() => child.schema())
        .catch((error: unknown) => {
          // A start that failed was logged by the child itself, with its reason and hint; only a list that failed is news.
          const log = logger({ child: name });
          if (child.status().state === "failed") log.debug({ err: error }, "eager start failed");
          else log.warn({ err: error }, "eager start failed");
        });
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
      ...(guess ? { hint: `did you mean "${guess}"?`, lookup: {} } : { hint: `known children: ${this.names().join(", ") || "none"}` }),
    });
  }
}

/**
 * A call that failed for want of a sign-in, from a client that can open URLs: the person is sent to sign in
 * through it, and the call is made once more. Otherwise (or when the sign-in does not finish) AUTH_REQUIRED stands.
 */
async function signInAndRetry<T>(error: unknown, signIn: SignInThrough, ctx: CallContext, again: () => Promise<T>): Promise<T> {
  const urls = ctx.caller?.urls;
  if (!(error instanceof GaggleError) || error.code !== "AUTH_REQUIRED" || !urls) throw error;
  try {
    await signIn(urls, ctx.cancel?.signal);
  } catch (failure) {
    const why = failure instanceof Error ? failure.message : String(failure);
    throw new GaggleError("AUTH_REQUIRED", `${error.message}; the sign-in offered through the client did not finish: ${why}`, {
      ...(error.hint && { hint: error.hint }),
    });
  }
  return again();
}
