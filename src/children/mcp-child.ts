// A real MCP server as a child: one pooled session, a state machine around it, a call queue, a schema cache.
import {
  type CallToolResult,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  type LoggingLevel,
  type ReadResourceResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ChildConfig } from "../config/index.js";
import { GaggleError } from "../shared/errors.js";
import { logger, type Logger } from "../shared/log.js";
import { timerDelay } from "../shared/timer-delay.js";
import { backoffMs } from "./backoff.js";
import { CallQueue } from "./call-queue.js";
import { callFailure, stderrSuffix } from "./call-failure.js";
import type { CallContext, Child, ChildEvents, ChildSchema, ChildState, ChildStatus } from "./child.js";
import { createSession, describeExit, restoreSessionState, startFailureReason, type Session } from "./child-session.js";
import { SessionGate } from "./session-gate.js";
import { StderrRing } from "./stderr-ring.js";
import { toolFilter } from "./tool-filter.js";
import type { ForwardOptions } from "./forwarding-transport.js";
import { CallerTracker } from "./upstream.js";

export interface McpChildOptions {
  /** Time a stdio child gets after SIGTERM before its process group is killed. */
  shutdownGraceMs: number;
  events: ChildEvents;
}

/** Calls made without a client session (the one-shot commands) count as one client of their own. */
const LOCAL_CALLER = "local";

export class McpChild implements Child {
  readonly name: string;
  readonly kind: ChildConfig["transport"];
  readonly description: string | undefined;

  private state: ChildState = "not_started";
  private session: Session | undefined;
  /** The one start in progress: concurrent first calls share it. */
  private starting: Promise<Session> | undefined;
  private stopping: Promise<void> | undefined;
  private readonly queue: CallQueue;
  private readonly stderr = new StderrRing();
  private readonly visible: (tool: string) => boolean;
  private readonly log: Logger;
  private idleTimer: NodeJS.Timeout | undefined;
  private starts = 0;
  private failedStarts = 0;
  private retryAt = 0;
  private lastError: string | undefined;
  private endedBecause: string | undefined;
  private callsServed = 0;
  private readonly callers = new CallerTracker();
  private readonly gate = new SessionGate();
  /** Kept across sessions: a restarted child gets the same subscriptions and log level. */
  private readonly subscriptions = new Set<string>();
  private logLevel: LoggingLevel | undefined;
  /** The visible tools of the last list fetched, and the list they came from. */
  private visibleTools: { from: Tool[]; tools: Tool[]; byName: Map<string, Tool> } | undefined;

  constructor(
    private readonly config: ChildConfig,
    private readonly options: McpChildOptions,
  ) {
    this.name = config.name;
    this.kind = config.transport;
    this.description = config.description;
    this.visible = toolFilter(config.tools);
    this.log = logger({ child: config.name });
    this.queue = new CallQueue(config.concurrency, config.idleTimeoutMs > 0 ? () => this.armIdleTimer() : undefined);
  }

  status(): ChildStatus {
    const session = this.session;
    return {
      state: this.state,
      kind: this.kind,
      pid: session?.process?.pid ?? null,
      startedAt: session?.startedAt ?? null,
      restarts: Math.max(0, this.starts - 1),
      lastError: this.lastError ?? null,
      stderrTail: this.stderr.tail(),
      callsServed: this.callsServed,
      queue: { running: this.queue.running, waiting: this.queue.waiting },
      toolCount: session?.cache.cachedTools ? this.exposed(session.cache.cachedTools).tools.length : null,
    };
  }

  async start(): Promise<void> {
    await this.ensureSession();
  }

  async tools(): Promise<Tool[]> {
    const session = this.session ?? (await this.ensureSession());
    const tools = session.cache.cachedTools ?? (await this.request(session, "tools/list", () => session.cache.tools()));
    return this.exposed(tools).tools;
  }

  knownTool(name: string): Tool | undefined {
    const tools = this.session?.cache.cachedTools;
    return tools && this.exposed(tools).byName.get(name);
  }

  /** The visible part of a fetched tool list, worked out once per list. */
  private exposed(tools: Tool[]): { tools: Tool[]; byName: Map<string, Tool> } {
    if (this.visibleTools?.from !== tools) {
      const visible = tools.filter((tool) => this.visible(tool.name));
      this.visibleTools = { from: tools, tools: visible, byName: new Map(visible.map((tool) => [tool.name, tool])) };
    }
    return this.visibleTools;
  }

  async schema(): Promise<ChildSchema> {
    const session = await this.ensureSession();
    const lists = await this.request(session, "the schema lists", () => session.cache.all());
    return { ...lists, tools: this.exposed(lists.tools).tools };
  }

  callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    clearTimeout(this.idleTimer);
    return this.queue.run(() => this.runCall(name, args, ctx), ctx.cancel);
  }

  /** One tools/call, once the queue has let it through. */
  private async runCall(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    const caller = ctx.caller?.sessionId ?? LOCAL_CALLER;
    const leave = this.gate.tryEnter(caller) ?? (await this.gate.enter(caller, ctx.cancel));
    this.callers.begin(ctx.caller);
    try {
      // Started inside the queue: a child that died while this call waited is restarted for it.
      const session = this.session ?? (await this.ensureSession());
      const params = { name, arguments: args, ...(ctx.meta && { _meta: ctx.meta }) };
      try {
        return (await session.transport.forward("tools/call", params, this.forwardOptions(ctx))) as CallToolResult;
      } catch (error) {
        throw this.failure(error, session, `tool "${name}"`);
      }
    } finally {
      this.callers.end(ctx.caller);
      leave();
      this.callsServed++;
    }
  }

  async readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    const params = { uri, ...(ctx.meta && { _meta: ctx.meta }) };
    return this.passThrough(`resources/read of ${uri}`, ctx, (session) =>
      session.transport.forward("resources/read", params, this.forwardOptions(ctx)),
    ) as Promise<ReadResourceResult>;
  }

  async getPrompt(name: string, args: Record<string, string> | undefined, ctx: CallContext): Promise<GetPromptResult> {
    const params = { name, ...(args && { arguments: args }), ...(ctx.meta && { _meta: ctx.meta }) };
    return this.passThrough(`prompt "${name}"`, ctx, (session) =>
      session.transport.forward("prompts/get", params, this.forwardOptions(ctx)),
    ) as Promise<GetPromptResult>;
  }

  async complete(params: CompleteRequest["params"], ctx: CallContext): Promise<CompleteResult> {
    return this.passThrough("completion/complete", ctx, (session) =>
      session.transport.forward("completion/complete", params, this.forwardOptions(ctx)),
    ) as Promise<CompleteResult>;
  }

  async subscribe(uri: string): Promise<void> {
    this.subscriptions.add(uri);
    const session = await this.ensureSession();
    await this.request(session, `resources/subscribe of ${uri}`, () => session.client.subscribeResource({ uri }));
  }

  async unsubscribe(uri: string): Promise<void> {
    this.subscriptions.delete(uri);
    const session = this.session;
    if (session) await this.request(session, `resources/unsubscribe of ${uri}`, () => session.client.unsubscribeResource({ uri }));
  }

  /** Applied now if the child is running and logs, and to every later session. */
  async setLoggingLevel(level: LoggingLevel): Promise<void> {
    this.logLevel = level;
    const session = this.session;
    if (session?.client.getServerCapabilities()?.logging) {
      await this.request(session, "logging/setLevel", () => session.client.setLoggingLevel(level));
    }
  }

  /** Requests other than tools/call skip the queue: they read, and must not wait behind long tool calls. */
  private async passThrough<T>(what: string, ctx: CallContext, run: (session: Session) => Promise<T>): Promise<T> {
    const session = await this.ensureSession();
    this.callers.begin(ctx.caller);
    try {
      return await this.request(session, what, () => run(session));
    } finally {
      this.callers.end(ctx.caller);
    }
  }

  private forwardOptions(ctx: CallContext): ForwardOptions {
    return { timeoutMs: this.config.timeoutMs, maxTotalTimeoutMs: this.config.maxTimeoutMs, cancel: ctx.cancel, onprogress: ctx.onprogress };
  }

  rootsChanged(): void {
    void this.session?.client.sendRootsListChanged().catch(() => {});
  }

  /** A client session went away: its calls are over, and the child's requests no longer go to it. */
  forgetCaller(sessionId: string): void {
    this.callers.forget(sessionId);
  }

  async close(): Promise<{ uptimeMs: number | null }> {
    clearTimeout(this.idleTimer);
    await this.starting?.catch(() => {});
    const session = this.session;
    // An explicit close also forgets past failures: the next call gets a fresh start without waiting.
    this.failedStarts = 0;
    this.retryAt = 0;
    if (!session) {
      await this.stopping;
      if (this.state !== "not_started") this.state = "stopped";
      return { uptimeMs: null };
    }
    const uptimeMs = Date.now() - session.startedAt.getTime();
    this.state = "stopping";
    this.stopping = this.endSession(session).finally(() => {
      this.stopping = undefined;
    });
    await this.stopping;
    this.state = "stopped";
    this.log.info({ uptimeMs }, "session closed");
    return { uptimeMs };
  }

  private async ensureSession(): Promise<Session> {
    if (this.session) return this.session;
    if (this.starting) return this.starting;
    await this.stopping;
    if (this.session) return this.session;
    const wait = this.retryAt - Date.now();
    if (wait > 0) {
      throw new GaggleError(
        "SERVER_FAILED",
        `${this.name} failed to start ${this.failedStarts} time(s) in a row; the next attempt is allowed in ` +
          `${(wait / 1000).toFixed(1)}s. Last error: ${this.lastError ?? "unknown"}`,
        { hint: `fix the cause shown by get_child_status("${this.name}"), or close_child_session to retry at once` },
      );
    }
    this.starting ??= this.startSession().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startSession(): Promise<Session> {
    this.state = "starting";
    this.endedBecause = undefined;
    const session = createSession({
      config: this.config,
      shutdownGraceMs: this.options.shutdownGraceMs,
      stderr: this.stderr,
      log: this.log,
      events: this.options.events,
      callers: this.callers,
      isStopping: () => this.state === "stopping",
      onClosed: (closed) => this.onSessionClosed(closed),
    });
    try {
      await session.client.connect(session.transport, { timeout: this.config.startupTimeoutMs });
    } catch (error) {
      await session.transport.close().catch(() => {});
      throw this.startFailed(error, session);
    }
    session.startedAt = new Date();
    await restoreSessionState(session, this.logLevel, this.subscriptions, this.log);
    this.session = session;
    this.starts++;
    this.failedStarts = 0;
    this.retryAt = 0;
    this.state = "running";
    this.log.info({ pid: session.process?.pid, restarts: this.starts - 1 }, "session started");
    this.armIdleTimer();
    return session;
  }

  private startFailed(error: unknown, session: Session): GaggleError {
    this.failedStarts++;
    this.retryAt = Date.now() + backoffMs(this.failedStarts);
    this.state = "failed";
    this.lastError = `failed to start: ${startFailureReason(error, session, this.config.startupTimeoutMs)}`;
    this.log.warn({ reason: this.lastError, failedStarts: this.failedStarts }, "start failed");
    const hint =
      this.kind === "stdio"
        ? `check the command, args and env of ${this.name} in the config; get_child_status shows its stderr`
        : `check the url and headers of ${this.name} in the config, and that the server is up`;
    return new GaggleError("SERVER_FAILED", `${this.name} ${this.lastError}${stderrSuffix(this.stderr.tail())}`, { hint, cause: error });
  }

  private onSessionClosed(session: Session): void {
    const exit = session.process?.exitInfo;
    this.endedBecause = exit ? describeExit(exit) : "closed its connection";
    if (this.session !== session) return;
    this.session = undefined;
    clearTimeout(this.idleTimer);
    if (this.state === "stopping") return;
    this.state = "failed";
    this.lastError = `${this.endedBecause} unexpectedly`;
    this.log.warn({ reason: this.endedBecause }, "child ended unexpectedly; the next call restarts it");
  }

  /** Runs a request on the session, turning whatever the SDK throws into a GaggleError. */
  private async request<T>(session: Session, what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw this.failure(error, session, what);
    }
  }

  /** What the SDK or the forwarding lane threw, as a GaggleError that says what happened to the child. */
  private failure(error: unknown, session: Session, what: string): GaggleError {
    return callFailure(error, {
      child: this.name,
      what,
      queue: { running: this.queue.running, waiting: this.queue.waiting },
      endedBecause: this.endedBecause,
      closing: this.state === "stopping" && this.session !== session,
      stderrTail: this.stderr.tail(),
    });
  }

  private async endSession(session: Session): Promise<void> {
    if (this.session === session) this.session = undefined;
    await session.client.close().catch((error: unknown) => this.log.warn({ err: error }, "error while closing"));
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    const ms = this.config.idleTimeoutMs;
    if (ms <= 0 || !this.session || this.queue.busy) return;
    this.idleTimer = setTimeout(() => {
      this.log.info({ idleMs: ms }, "idle timeout; stopping");
      void this.close();
    }, timerDelay(ms)).unref();
  }
}
