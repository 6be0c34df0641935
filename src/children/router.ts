// server_id -> Child, and the one path every tool call takes, to every child: check arguments, wait in line, call.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { nearest } from "../shared/suggest.js";
import { GaggleError } from "../shared/errors.js";
import { logger } from "../shared/log.js";
import { checkArguments } from "./calls/arg-validator.js";
import { turnTimeout } from "./calls/call-failure.js";
import { holding } from "./calls/call-hold.js";
import { CallLine, type Leave } from "./calls/call-line.js";
import { CallTurn, inLine } from "./calls/call-turn.js";
import { LOCAL_PRINCIPAL, type CallContext, type Child, type ChildStatus, type QueueDepth, type Turn, type UrlOpener } from "./child.js";

/** A child as the router takes it: how many of its calls may run at once (the rest wait their turn). */
export interface RoutedChild {
  child: Child;
  concurrency: number;
  /**
   * Calls of two clients never run at the child at once: a real MCP server's own requests and log messages do
   * not say which call they serve, so only one client's calls in flight routes them exactly (see CallLine).
   */
  oneClientAtATime?: boolean;
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
  line: CallLine;
  /**
   * The turn of a call let in at once: the line it came through, and no wait (none for a call without a time
   * limit, nothing of the limit used up for one with one).
   */
  atOnce: Turn;
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
   * the caller to close). Calls already in the old child's line stay there and end with it.
   */
  put({ child, concurrency, oneClientAtATime, signIn, timeoutMs }: RoutedChild): Child | undefined {
    const before = this.slots.get(child.name)?.child;
    const line = new CallLine(concurrency, oneClientAtATime === true);
    const atOnce = { queue: line, queuedMs: timeoutMs === undefined ? undefined : 0 };
    this.slots.set(child.name, { child, line, atOnce, served: 0, signIn, timeoutMs });
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
    const { child, line, served } = this.slot(serverId);
    return { name: child.name, ...child.status(), callsServed: served, queue: { running: line.running, waiting: line.waiting } };
  }

  /** Whether a person can sign in to this child (a remote child, which may be behind OAuth). */
  canSignIn(serverId: string): boolean {
    return this.slot(serverId).signIn !== undefined;
  }

  /** Runs a sign-in to the child, the person sent to its page through `urls`; resolves once they are signed in. */
  signIn(serverId: string, urls: UrlOpener, signal?: AbortSignal): Promise<void> {
    const { signIn } = this.slot(serverId);
    if (!signIn)
      return Promise.reject(new GaggleError("INVALID_ARGS", `${serverId} is not reached over http or sse: there is nothing to sign in to`));
    return signIn(urls, signal);
  }

  async tool(serverId: string, toolName: string): Promise<{ child: Child; tool: Tool }> {
    const child = this.get(serverId);
    return { child, tool: await this.toolOf(child, toolName) };
  }

  /** `child`'s tool of that name, as it lists it; TOOL_NOT_FOUND, with what is near, when it lists none. */
  private async toolOf(child: Child, toolName: string): Promise<Tool> {
    const serverId = child.name;
    const tools = await child.tools();
    const tool = tools.find((candidate) => candidate.name === toolName);
    if (tool) return tool;
    const hiddenBy = child.hiddenBy?.(toolName);
    if (hiddenBy) {
      throw new GaggleError("TOOL_NOT_FOUND", `${serverId} offers no tool "${toolName}": the config's ${hiddenBy} leaves it out`, {
        hint: `change ${hiddenBy} to offer it`,
      });
    }
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
   * A tools/call named by its child's name and the tool's (the meta-tools take names): the child and the tool
   * are found, then called as `call` calls them.
   */
  callTool(serverId: string, toolName: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    const slot = this.slots.get(serverId);
    if (!slot) return Promise.reject(this.notFound(serverId));
    const { signIn } = slot;
    if (!signIn) return this.callNamed(slot, toolName, args, ctx);
    // A sign-in takes a person's time: the call, made once more, goes to the child of that name then (a reload may have replaced it).
    const again = () => {
      const now = this.slots.get(serverId);
      return now ? this.callNamed(now, toolName, args, ctx) : Promise.reject(this.notFound(serverId));
    };
    return this.callNamed(slot, toolName, args, ctx).catch((error: unknown) => signInAndRetry(error, signIn, ctx, again));
  }

  /**
   * A tools/call of a tool already found (`tool` as `child` lists it). Arguments that do not fit the tool's
   * input schema never reach the child, and a call reaches it only when the child's line lets it through: one
   * whose time runs out first leaves the line with TIMEOUT. That the arguments are an object (or absent) is
   * checked where they are read: the tools/call lane, or the meta-tool's own schema.
   */
  call(child: Child, tool: Tool, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    const slot = this.slots.get(child.name);
    // A child found before the children changed is called by name: the router's own child of that name, if any.
    if (slot?.child !== child) return this.callTool(child.name, tool.name, args, ctx);
    ctx.operation?.routed(child.name, tool.name);
    const { signIn } = slot;
    if (!signIn) return this.checkedCall(slot, tool, args, ctx);
    const again = () => {
      ctx.operation?.routed(child.name, tool.name);
      return this.checkedCall(slot, tool, args, ctx);
    };
    return this.checkedCall(slot, tool, args, ctx).catch((error: unknown) => signInAndRetry(error, signIn, ctx, again));
  }

  private callNamed(slot: Slot, toolName: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    try {
      // A tool the child's cached list already holds is called without awaiting anything first.
      const { child } = slot;
      ctx.operation?.routed(child.name, toolName);
      const known = child.knownTool(toolName);
      if (known) return this.checkedCall(slot, known, args, ctx);
      return this.toolOf(child, toolName).then((tool) => this.checkedCall(slot, tool, args, ctx));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The call's turn is counted here alone: from when it arrives to when the line lets it through. */
  private checkedCall(slot: Slot, tool: Tool, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<CallToolResult> {
    const { child, line } = slot;
    const given = args ?? {};
    const problem = checkArguments(tool, given);
    if (problem) {
      const error = new GaggleError("INVALID_ARGS", `invalid arguments for ${child.name}.${tool.name}: ${problem}`, {
        lookup: { server: child.name, tool: tool.name },
      });
      return Promise.reject(error);
    }
    const { caller } = ctx;
    const session = caller?.sessionId ?? "local";
    // The line takes turns between principals, so one that floods the child holds another back by one call at most.
    const principal = caller?.principal ?? LOCAL_PRINCIPAL;
    // Most calls find room: they go in at once, without a promise, a timer or a clock for a wait they do not have.
    const now = ctx.holds ? undefined : line.tryEnter(session, principal);
    if (now) return this.reach(now, slot, tool, given, ctx, slot.atOnce);
    const { timeoutMs } = slot;
    const turn =
      timeoutMs === undefined
        ? undefined
        : new CallTurn(timeoutMs, line, (queuedMs) => turnTimeout(child.name, tool.name, timeoutMs, queuedMs, line));
    const wait = () => inLine(turn, ctx.cancel, (cancel) => line.enter(session, principal, cancel));
    if (ctx.holds) {
      const call = () => {
        turn?.began();
        return this.run(slot, tool, given, ctx, turn ?? slot.atOnce);
      };
      return holding(async () => line.tryEnter(session, principal) ?? (await wait()), ctx.holds, call);
    }
    return wait().then((leave) => {
      turn?.began();
      return this.reach(leave, slot, tool, given, ctx, turn ?? slot.atOnce);
    });
  }

  /**
   * The call has its turn: it reaches the child, holding its place in the line until it ends, given back however it
   * ends, before anyone awaiting the call hears of it. The call's own promise is the answer: a reaction on it gives
   * the place back, without a promise of its own between the call and its caller.
   */
  private reach(leave: Leave, slot: Slot, tool: Tool, args: Record<string, unknown>, ctx: CallContext, turn: Turn): Promise<CallToolResult> {
    let answer: Promise<CallToolResult>;
    try {
      answer = this.run(slot, tool, args, ctx, turn);
    } catch (error) {
      leave();
      return Promise.reject(error);
    }
    answer.then(leave, leave);
    return answer;
  }

  /** The call has its turn: it reaches the child. */
  private run(slot: Slot, tool: Tool, args: Record<string, unknown>, ctx: CallContext, turn: Turn): Promise<CallToolResult> {
    slot.served++;
    return slot.child.callTool(tool.name, args, ctx, turn);
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
    await Promise.allSettled(this.all().map((child) => child.close(undefined, "shutdown")));
  }

  private slot(serverId: string): Slot {
    const slot = this.slots.get(serverId);
    if (slot) return slot;
    throw this.notFound(serverId);
  }

  private notFound(serverId: string): GaggleError {
    const guess = nearest(serverId, this.names());
    return new GaggleError("SERVER_NOT_FOUND", `no child server named "${serverId}"`, {
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
