// A real MCP server as a child: one pooled session behind an explicit state machine, a session gate, a schema cache.
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  type LoggingLevel,
  type ReadResourceResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ChildConfig } from "../config/index.js";
import { systemClock, type Clock } from "../shared/clock.js";
import { errorChain, GaggleError } from "../shared/errors.js";
import { logger, type Logger } from "../shared/log.js";
import { backoffMs } from "./backoff.js";
import { callFailure, stderrSuffix } from "./call-failure.js";
import type { CallContext, Child, ChildSchema, ChildStatus } from "./child.js";
import { closeSession, createSession, restoreSessionState, startFailureReason, type Session } from "./child-session.js";
import { ChildStateMachine, OperationLock } from "./child-state.js";
import type { ForwardOptions } from "./forwarding-transport.js";
import { SessionGate } from "./session-gate.js";
import { StderrRing } from "./stderr-ring.js";
import type { Switchboard } from "./switchboard.js";
import { connectionLost } from "./remote-transport.js";
import { toolFilter } from "./tool-filter.js";
import { CallerTracker } from "./upstream.js";

export interface McpChildOptions {
  /** Time a stdio child gets after SIGTERM before its process group is killed. */
  shutdownGraceMs: number;
  switchboard: Switchboard;
  /** Back-off and the idle timeout read it; the system clock unless a test gives its own. */
  clock?: Clock;
}

/** Calls made without a client session (the one-shot commands) count as one client of their own. */
const LOCAL_CALLER = "local";

/**
 * The session's life is the state machine in child-state.ts; starts and stops run one at a time under one
 * lock, and calls that arrive while a start is under way share it.
 */
export class McpChild implements Child {
  readonly name: string;
  readonly description: string | undefined;

  private readonly machine: ChildStateMachine;
  private readonly lock = new OperationLock();
  /** The start under way or queued behind a stop: every caller that needs the session meanwhile waits for this one. */
  private pendingStart: Promise<Session> | undefined;
  private readonly clock: Clock;
  private readonly switchboard: Switchboard;
  private readonly shutdownGraceMs: number;
  private readonly stderr = new StderrRing();
  private readonly visible: (tool: string) => boolean;
  private readonly log: Logger;
  private readonly callers = new CallerTracker();
  private readonly gate = new SessionGate();
  /** Kept across sessions: a restarted child gets the same subscriptions (and the switchboard's log level). */
  private readonly subscriptions = new Set<string>();
  /** Sessions started so far: the first is a start, the rest restarts. */
  private starts = 0;
  private lastError: string | undefined;
  /** Tool calls at the child now; the idle timer runs only while there are none. */
  private inFlight = 0;
  private cancelIdleTimer: (() => void) | undefined;
  /** The visible tools of the last list fetched, and the list they came from. */
  private visibleTools: { from: Tool[]; tools: Tool[]; byName: Map<string, Tool> } | undefined;

  constructor(
    private readonly config: ChildConfig,
    options: McpChildOptions,
  ) {
    this.name = config.name;
    this.description = config.description;
    this.machine = new ChildStateMachine(config.name);
    this.clock = options.clock ?? systemClock;
    this.switchboard = options.switchboard;
    this.shutdownGraceMs = options.shutdownGraceMs;
    this.visible = toolFilter(config.tools);
    this.log = logger({ child: config.name });
    this.switchboard.onLogLevel(config.name, (level) => this.applyLogLevel(level));
    this.switchboard.onCallerGone((sessionId) => this.callers.forget(sessionId));
    this.switchboard.onRootsChanged(() => void this.machine.running?.client.sendRootsListChanged().catch(() => {}));
  }

  status(): ChildStatus {
    const phase = this.machine.phase;
    const live = phase.state === "running" || phase.state === "stopping" ? phase : undefined;
    const tools = live?.session.cache.cachedTools;
    return {
      state: phase.state,
      kind: this.config.transport,
      pid: live?.session.process?.pid ?? null,
      startedAt: live?.startedAt ?? null,
      restarts: Math.max(0, this.starts - 1),
      lastError: this.lastError ?? null,
      stderrTail: this.stderr.tail(),
      toolCount: tools ? this.exposed(tools).tools.length : null,
    };
  }

  async tools(): Promise<Tool[]> {
    const session = this.machine.running ?? (await this.ensureSession());
    const tools = session.cache.cachedTools ?? (await this.request(session, "tools/list", () => session.cache.tools()));
    return this.exposed(tools).tools;
  }

  knownTool(name: string): Tool | undefined {
    const tools = this.machine.running?.cache.cachedTools;
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

  /** One tools/call, once the router's queue has let it through. */
  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    this.cancelIdleTimer?.();
    this.inFlight++;
    const caller = ctx.caller?.sessionId ?? LOCAL_CALLER;
    try {
      const leave = this.gate.tryEnter(caller) ?? (await this.gate.enter(caller, ctx.cancel));
      this.callers.begin(ctx.caller);
      try {
        // Started here, behind the queue: a child that died while this call waited is restarted for it.
        const session = this.machine.running ?? (await this.ensureSession());
        const params = { name, arguments: args, ...(ctx.meta && { _meta: ctx.meta }) };
        try {
          return (await session.transport.forward("tools/call", params, this.forwardOptions(ctx))) as CallToolResult;
        } catch (error) {
          throw this.failure(error, session, `tool "${name}"`, ctx);
        }
      } finally {
        this.callers.end(ctx.caller);
        leave();
      }
    } finally {
      if (--this.inFlight === 0) this.armIdleTimer();
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
    const session = this.machine.running;
    if (session) await this.request(session, `resources/unsubscribe of ${uri}`, () => session.client.unsubscribeResource({ uri }));
  }

  /** Applied now if the child is running and logs; every later session gets the switchboard's level when it starts. */
  private async applyLogLevel(level: LoggingLevel): Promise<void> {
    const session = this.machine.running;
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

  /** Ends the session and frees its process; an explicit close also forgets past failed starts, so the next call starts at once. */
  close(): Promise<{ uptimeMs: number | null }> {
    this.cancelIdleTimer?.();
    return this.lock.run(() => this.stop());
  }

  /** Runs under the lock. */
  private async stop(): Promise<{ uptimeMs: number | null }> {
    const phase = this.machine.phase;
    if (phase.state !== "running") {
      if (phase.state === "failed") this.machine.move({ state: "stopped" });
      return { uptimeMs: null };
    }
    const { session, startedAt } = phase;
    const uptimeMs = this.clock.now() - startedAt.getTime();
    this.machine.move({ state: "stopping", session, startedAt });
    await closeSession(session, this.shutdownGraceMs).catch((error: unknown) => this.log.warn({ err: error }, "error while closing"));
    this.machine.move({ state: "stopped" });
    this.log.info({ uptimeMs }, "session closed");
    return { uptimeMs };
  }

  /** The running session, or the one start every caller waits for; refused while the back-off after failed starts lasts. */
  private ensureSession(): Promise<Session> {
    const running = this.machine.running;
    if (running) return Promise.resolve(running);
    if (this.pendingStart) return this.pendingStart;
    const phase = this.machine.phase;
    const wait = phase.state === "failed" ? phase.retryAt - this.clock.now() : 0;
    if (phase.state === "failed" && wait > 0) {
      return Promise.reject(
        new GaggleError(
          "SERVER_FAILED",
          `${this.name} failed to start ${phase.failedStarts} time(s) in a row; the next attempt is allowed in ` +
            `${(wait / 1000).toFixed(1)}s. Last error: ${this.lastError ?? "unknown"}`,
          { hint: `fix the cause shown by get_child_status("${this.name}"), or close_child_session to retry at once` },
        ),
      );
    }
    const start = this.lock.run(() => this.startSession());
    this.pendingStart = start;
    const clear = () => {
      if (this.pendingStart === start) this.pendingStart = undefined;
    };
    start.then(clear, clear);
    return start;
  }

  /** Runs under the lock, so it begins only once a stop before it has finished. */
  private async startSession(): Promise<Session> {
    const before = this.machine.phase;
    if (before.state === "running") return before.session;
    const failedStarts = before.state === "failed" ? before.failedStarts : 0;
    this.machine.move({ state: "starting", failedStarts });
    const session = createSession({
      config: this.config,
      shutdownGraceMs: this.shutdownGraceMs,
      stderr: this.stderr,
      log: this.log,
      events: this.switchboard,
      callers: this.callers,
      onClosed: (closed) => this.onSessionClosed(closed),
      onLost: (lost, error) => this.onSessionLost(lost, error),
    });
    try {
      await session.client.connect(session.transport, { timeout: this.config.startupTimeoutMs });
    } catch (error) {
      await session.transport.close().catch(() => {});
      throw this.startFailed(error, session, failedStarts + 1);
    }
    const startedAt = new Date(this.clock.now());
    await restoreSessionState(session, this.switchboard.logLevel, this.subscriptions, this.log);
    this.starts++;
    this.machine.move({ state: "running", session, startedAt });
    this.log.info({ pid: session.process?.pid, restarts: this.starts - 1 }, "session started");
    this.armIdleTimer();
    return session;
  }

  private startFailed(error: unknown, session: Session, failedStarts: number): GaggleError {
    this.lastError = `failed to start: ${startFailureReason(error, session, this.config.startupTimeoutMs)}`;
    this.machine.move({ state: "failed", failedStarts, retryAt: this.clock.now() + backoffMs(failedStarts) });
    this.log.warn({ reason: this.lastError, failedStarts }, "start failed");
    const hint =
      this.config.transport === "stdio"
        ? `check the command, args and env of ${this.name} in the config; get_child_status shows its stderr`
        : `check the url and headers of ${this.name} in the config, and that the server is up`;
    return new GaggleError("SERVER_FAILED", `${this.name} ${this.lastError}${stderrSuffix(this.stderr.tail())}`, { hint, cause: error });
  }

  /** A running session that ends without gaggle asking fails the child; the next call starts it again at once. */
  private onSessionClosed(session: Session): void {
    if (this.machine.running !== session || session.closing) return;
    this.cancelIdleTimer?.();
    this.lastError = `${session.endedBecause} unexpectedly`;
    this.machine.move({ state: "failed", failedStarts: 0, retryAt: 0 });
    this.log.warn({ reason: session.endedBecause }, "child ended unexpectedly; the next call restarts it");
  }

  /**
   * A remote session whose server is gone or forgot it: it fails the child like an exit, its other calls in
   * flight fail at once (closing the transport fails them), and the next call starts a new session.
   */
  private onSessionLost(session: Session, error: unknown): void {
    if (this.machine.running !== session || session.closing) return;
    session.endedBecause = `lost its connection (${errorChain(error)})`;
    this.onSessionClosed(session);
    void session.client.close().catch(() => {});
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
  private failure(error: unknown, session: Session, what: string, ctx?: CallContext): GaggleError {
    if (connectionLost(error)) {
      // A request that could not be sent is the session's end, told as the end of a session is.
      this.onSessionLost(session, error);
      error = new McpError(ErrorCode.ConnectionClosed, errorChain(error));
    }
    return callFailure(error, {
      child: this.name,
      what,
      queue: ctx?.queue,
      endedBecause: session.endedBecause,
      closing: session.closing,
      stderrTail: this.stderr.tail(),
    });
  }

  private armIdleTimer(): void {
    this.cancelIdleTimer?.();
    const ms = this.config.idleTimeoutMs;
    if (ms <= 0 || this.inFlight > 0 || !this.machine.running) return;
    this.cancelIdleTimer = this.clock.after(ms, () => {
      this.cancelIdleTimer = undefined;
      // Checked under the lock: a call that came in meanwhile keeps the session.
      void this.lock.run(async () => {
        if (this.inFlight > 0) return;
        this.log.info({ idleMs: ms }, "idle timeout; stopping");
        await this.stop();
      });
    });
  }
}
