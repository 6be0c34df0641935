// A real MCP server as a child: its lists, calls and status over one pooled session, which a SessionKeeper keeps.
import type { CallToolResult, CompleteRequest, CompleteResult } from "@modelcontextprotocol/sdk/types.js";
import type { GetPromptResult, ReadResourceResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ChildConfig } from "../config/index.js";
import { systemClock, type Clock } from "../shared/clock.js";
import { errorChain, isRequestRefusal } from "../shared/errors.js";
import { logger, type Logger } from "../shared/log.js";
import type { CancelState } from "../shared/observer.js";
import type { BackgroundWork, CallContext, Child, ChildSchema, ChildStatus, CloseReason, Turn } from "./child.js";
import { statusIn } from "./child-state.js";
import { exchangeInEra, type RequestLabel } from "./wire/era-exchange.js";
import type { ForwardLimits, ForwardOwner } from "./wire/forwarded-request.js";
import type { Session } from "./child-session.js";
import { CatalogShelf } from "./catalog.js";
import { StderrRing } from "./processes/stderr-ring.js";
import { StdoutNoise } from "./processes/stdout-noise.js";
import { SessionKeeper, type SessionParts } from "./session-keeper.js";
import type { Switchboard } from "./switchboard.js";
import { hidingRule, visibleTools, type VisibleTools } from "./tool-filter.js";
import { CallerTracker, type CallInFlight } from "./wire/caller-tracker.js";

/** How McpChild makes its sessions (see SessionParts); the clock is the system's unless a test gives its own. */
export type McpChildOptions = Pick<SessionParts, "shutdownGraceMs" | "probeTimeoutMs" | "stateDir" | "switchboard"> & { clock?: Clock };

/** A real child as the router sees it: its lists, its calls and its status, on the one session its SessionKeeper keeps. */
export class McpChild implements Child {
  readonly name: string;
  readonly description: string | undefined;

  private readonly keeper: SessionKeeper;
  private readonly switchboard: Switchboard;
  private readonly stderr = new StderrRing();
  private readonly stdoutNoise = new StdoutNoise();
  private readonly callers = new CallerTracker();
  /** Kept across sessions: a restarted child gets the same subscriptions (and the switchboard's log level). */
  private readonly subscriptions = new Set<string>();
  private readonly limits: ForwardLimits;
  private readonly exposed: VisibleTools;
  private readonly log: Logger;
  private readonly catalog: CatalogShelf;

  constructor(
    private readonly config: ChildConfig,
    options: McpChildOptions,
  ) {
    this.name = config.name;
    this.description = config.description;
    this.switchboard = options.switchboard;
    this.limits = { timeoutMs: config.timeoutMs, maxTotalTimeoutMs: config.maxTimeoutMs };
    this.log = logger({ child: config.name });
    this.exposed = visibleTools(config, () => this.keeper.running?.era, this.log);
    this.catalog = new CatalogShelf(options.stateDir, config);
    this.keeper = new SessionKeeper({
      config,
      shutdownGraceMs: options.shutdownGraceMs,
      probeTimeoutMs: options.probeTimeoutMs,
      stateDir: options.stateDir,
      clock: options.clock ?? systemClock,
      switchboard: options.switchboard,
      log: this.log,
      stderr: this.stderr,
      stdoutNoise: this.stdoutNoise,
      callers: this.callers,
      catalog: this.catalog,
      subscriptions: this.subscriptions,
      outputHeld: () => this.outputHeld(),
    });
    this.switchboard.onLogLevel(config.name, (level) => this.keeper.applyLogLevel(level));
    this.switchboard.onCallerGone((sessionId) => this.callers.forget(sessionId));
    this.switchboard.onRootsChanged(() => void this.keeper.running?.client.sendRootsListChanged().catch(() => {}));
    this.switchboard.onClientDrained(() => this.keeper.newest?.hold.readAgain());
  }

  status(): ChildStatus {
    return statusIn(this.keeper.phase, this.config.transport, {
      visibleTools: (tools) => this.exposed.of(tools).tools.length,
      restarts: this.keeper.restarts,
      lastError: this.keeper.lastError ?? null,
      authFailed: this.keeper.lastFailure?.code === "AUTH_REQUIRED",
      stderrTail: this.stderr.tail(),
      stdoutNoise: this.stdoutNoise.view(),
    });
  }

  async tools(): Promise<Tool[]> {
    const known = this.keeper.running?.cache.cachedTools;
    if (known) return this.exposed.of(known).tools;
    return this.exposed.of(await this.keeper.withSession("tools/list", (session) => session.cache.tools())).tools;
  }

  hiddenBy(name: string): string | undefined {
    if (!this.listedTools()?.some((tool) => tool.name === name)) return undefined;
    const rule = hidingRule(this.config.tools, name);
    return rule && `mcp_servers.${this.name}.tools.${rule}`;
  }

  /** A catalogued tool is known too: calling it starts the child. */
  knownTool(name: string): Tool | undefined {
    const tools = this.listedTools();
    return tools && this.exposed.of(tools).byName.get(name);
  }

  /** The child's whole tool list in hand, unfiltered: the running session's, else the catalog's from its last run. */
  private listedTools(): Tool[] | undefined {
    const running = this.keeper.running;
    return running ? running.cache.cachedTools : this.catalog.read().tools;
  }

  known(): Partial<ChildSchema> {
    // A running child's own lists count: the catalog's may be what it just said changed.
    const running = this.keeper.running;
    const { tools, ...rest } = running ? { tools: running.cache.cachedTools } : this.catalog.read();
    return { ...rest, ...(tools && { tools: this.exposed.of(tools).tools }) };
  }

  async schema(): Promise<ChildSchema> {
    const lists = await this.keeper.withSession("the schema lists", (session) => session.cache.all());
    return { ...lists, tools: this.exposed.of(lists.tools).tools };
  }

  /**
   * One tools/call, once the router's line has let it through: the router routes a real child's calls one
   * client at a time (RoutedChild.oneClientAtATime), so the child's own requests meanwhile go to that client.
   */
  callTool(name: string, args: Record<string, unknown>, ctx: CallContext, turn?: Turn): Promise<CallToolResult> {
    const params: Record<string, unknown> = { name, arguments: args };
    if (ctx.meta) params._meta = ctx.meta;
    return this.forwardFor(ctx, "tools/call", params, turn) as Promise<CallToolResult>;
  }

  async readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    const params = { uri, ...(ctx.meta && { _meta: ctx.meta }) };
    return this.passThrough("resources/read", params, ctx) as Promise<ReadResourceResult>;
  }

  async getPrompt(name: string, args: Record<string, string> | undefined, ctx: CallContext): Promise<GetPromptResult> {
    const params = { name, ...(args && { arguments: args }), ...(ctx.meta && { _meta: ctx.meta }) };
    return this.passThrough("prompts/get", params, ctx) as Promise<GetPromptResult>;
  }

  async complete(params: CompleteRequest["params"], ctx: CallContext): Promise<CompleteResult> {
    return this.passThrough("completion/complete", params, ctx) as Promise<CompleteResult>;
  }

  /** Added after the session is had: a session started for this call would otherwise subscribe it twice. */
  async subscribe(uri: string): Promise<void> {
    await this.keeper.withSession(`resources/subscribe of ${uri}`, (session) => {
      this.subscriptions.add(uri);
      return session.client.subscribeResource({ uri });
    });
  }

  async unsubscribe(uri: string): Promise<void> {
    this.subscriptions.delete(uri);
    const session = this.keeper.running;
    if (session) await this.keeper.request(session, `resources/unsubscribe of ${uri}`, () => session.client.unsubscribeResource({ uri }));
  }

  /** A server's own background work is its own affair: gaggle sees only its calls. */
  background(): BackgroundWork[] {
    return [];
  }

  /**
   * Ends the session and frees its process; an explicit close also forgets past failed starts, so the next call starts
   * at once. Resolves once what the session recorded in the catalog is on disk, for the next child of this definition.
   */
  async close(_principal?: string, why?: CloseReason): Promise<{ uptimeMs: number | null }> {
    const closed = await this.keeper.close(why);
    await this.catalog.settled();
    return closed;
  }

  /** Requests other than tools/call skip the queue: they read, and must not wait behind long tool calls. */
  private passThrough(method: string, params: Record<string, unknown>, ctx: CallContext): Promise<Record<string, unknown>> {
    return this.forwardFor(ctx, method, params);
  }

  /**
   * A client's request at the child, as use of the child (the idle timeout counts from its end); meanwhile the
   * child's own requests may go to its caller. It is forwarded on the running session, started for it if needed (a
   * child that died while the call waited its turn is restarted for it). A request that never reached a remote
   * server (connection refused, or the server no longer knew the session) ran nowhere, so it is sent once more, on
   * a new session.
   *
   * Most requests find a session running over a pipe, in the 2025 era, with nothing observing them: nothing to start,
   * nothing to send again, no exchange of the era's own. The wire's promise is then the answer as it is, and the wire
   * tells the ForwardedCall of its end: no async function, and no promise of its own, between the wire and the caller.
   */
  private forwardFor(ctx: CallContext, method: string, params: Record<string, unknown>, turn?: Turn): Promise<Record<string, unknown>> {
    const keeper = this.keeper;
    const session = keeper.running;
    keeper.idle.begin();
    const call = new ForwardedCall(this.name, method, params, turn, ctx.cancel, keeper, this.callers, this.callers.begin(ctx.caller));
    if (session === undefined || session.remote || session.era.modern || ctx.operation || ctx.resume) return this.exchangeFor(call, ctx);
    call.session = session;
    return session.wire.forward(method, params, this.limits, ctx, turn?.queuedMs, call);
  }

  /** The rest: a request that may need a start, a second sending, or an exchange of its era's own. */
  private async exchangeFor(call: ForwardedCall, ctx: CallContext): Promise<Record<string, unknown>> {
    const keeper = this.keeper;
    try {
      for (let retried = false; ; retried = true) {
        const session = (call.session = keeper.running ?? (await keeper.ensure()));
        try {
          return await exchangeInEra(session, call.method, call.params, this.limits, ctx, call);
        } catch (error) {
          // A cancelled request is not sent again, and what it failed with is read as its cancellation (see failureOf).
          if (retried || isRequestRefusal(error) || ctx.cancel?.aborted || !session.remote?.neverReached(error)) throw call.failure(error);
          keeper.lost(session, error);
          this.log.info({ reason: errorChain(error) }, `${call.what} never reached the server; sending it on a new session`);
        }
      }
    } finally {
      call.settled();
    }
  }

  /**
   * A running session's output is held while a call in flight is from a client that is not reading what it
   * was sent (what the child writes would only queue up for it); it is read again when a client drains or a call
   * ends. A session being started is always read, so that no start waits on a client.
   */
  private outputHeld(): boolean {
    return this.keeper.phase.state === "running" && this.switchboard.servesBacklogged(this.callers);
  }
}

/**
 * A client's request forwarded to the child, until it ends: as errors name it ("tool \"x\"", worded only when one
 * does), what it fails with, and its end, which is the end of the child's use (see forwardFor).
 */
class ForwardedCall implements RequestLabel, ForwardOwner {
  /** The session it is sent on; a request sent again moves to the new one. */
  session: Session | undefined;
  readonly queuedMs: number | undefined;

  constructor(
    readonly child: string,
    readonly method: string,
    readonly params: Record<string, unknown>,
    private readonly turn: Turn | undefined,
    private readonly cancel: CancelState | undefined,
    private readonly keeper: SessionKeeper,
    private readonly callers: CallerTracker,
    private readonly inFlight: CallInFlight | undefined,
  ) {
    this.queuedMs = turn?.queuedMs;
  }

  get what(): string {
    const { method, params } = this;
    if (method === "tools/call") return `tool "${String(params.name)}"`;
    if (method === "prompts/get") return `prompt "${String(params.name)}"`;
    return method === "resources/read" ? `resources/read of ${String(params.uri)}` : method;
  }

  /** A refusal of the request is passed on as it is; anything else is read as what happened to the child. */
  failure(error: unknown): Error {
    return isRequestRefusal(error) ? (error as Error) : this.keeper.failureOf(error, this.session!, this.what, this.turn, this.cancel);
  }

  settled(): void {
    this.callers.end(this.inFlight);
    // Its client may have been what held the output (see outputHeld).
    this.keeper.newest?.hold.readAgain();
    this.keeper.idle.end();
  }
}
