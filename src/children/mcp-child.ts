// A real MCP server as a child: one pooled session behind an explicit state machine, and a schema cache.
import { ErrorCode, McpError, type CallToolResult, type CompleteRequest, type CompleteResult } from "@modelcontextprotocol/sdk/types.js";
import type { GetPromptResult, LoggingLevel, ReadResourceResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ChildConfig } from "../config/index.js";
import { systemClock, type Clock } from "../shared/clock.js";
import { errorChain, isRequestRefusal, type GaggleError } from "../shared/errors.js";
import { logger, type Logger } from "../shared/log.js";
import { backoffMs } from "./backoff.js";
import { backoffRefusal, callFailure, startFailure } from "./calls/call-failure.js";
import type { BackgroundWork, CallContext, Child, ChildSchema, ChildStatus, Turn } from "./child.js";
import {
  abandonStart,
  closeSession,
  connectSession,
  createSession,
  loadRemoteKit,
  pingOrLose,
  restoreSessionState,
  startFailureReason,
  type Session,
} from "./child-session.js";
import { ChildStateMachine, OperationLock, statusIn } from "./child-state.js";
import { exchangeInEra } from "./wire/era-exchange.js";
import type { ForwardLimits } from "./wire/forwarded-request.js";
import { CatalogShelf } from "./catalog.js";
import { IdleWatch } from "./idle-watch.js";
import { SignInWatch } from "./oauth/sign-in-watch.js";
import { TokenStore } from "./oauth/token-store.js";
import { StderrRing } from "./processes/stderr-ring.js";
import { StdoutNoise } from "./processes/stdout-noise.js";
import type { Switchboard } from "./switchboard.js";
import { visibleTools, type VisibleTools } from "./tool-filter.js";
import { CallerTracker } from "./wire/caller-tracker.js";

export interface McpChildOptions {
  /** Time a stdio child gets after SIGTERM before its process group is killed. */
  shutdownGraceMs: number;
  /** Where a remote child's sign-in (OAuth client and tokens) is kept. */
  stateDir: string;
  switchboard: Switchboard;
  /** Every time McpChild reads (back-off, the idle timeout, start times and uptime); the system clock unless a test gives its own. */
  clock?: Clock;
}

/** The session's life is the state machine in child-state.ts; starts and stops run one at a time under one lock, and calls that arrive while a start is under way share it. */
export class McpChild implements Child {
  readonly name: string;
  readonly description: string | undefined;

  private readonly machine: ChildStateMachine;
  private readonly lock = new OperationLock();
  /** The start under way or queued behind a stop: every caller that needs the session meanwhile waits for this one. */
  private pendingStart: Promise<Session> | undefined;
  private readonly clock: Clock;
  private readonly switchboard: Switchboard;
  private readonly sessionOptions: Pick<McpChildOptions, "shutdownGraceMs" | "stateDir">;
  private readonly stderr = new StderrRing();
  private readonly stdoutNoise = new StdoutNoise();
  private readonly log: Logger;
  private readonly callers = new CallerTracker();
  /** Kept across sessions: a restarted child gets the same subscriptions (and the switchboard's log level). */
  private readonly subscriptions = new Set<string>();
  private starts = 0; // sessions started so far: the first is a start, the rest restarts
  private newest: Session | undefined; // the session made last: while a start is under way, the one starting
  private lastError: string | undefined;
  private lastFailure: GaggleError | undefined;
  /** Every request at the child, tool calls or others, is use; the idle timeout counts from the last. */
  private readonly idle: IdleWatch;
  private readonly limits: ForwardLimits;
  private readonly exposed: VisibleTools;
  private readonly signIn: SignInWatch;
  private readonly catalog: CatalogShelf;

  constructor(
    private readonly config: ChildConfig,
    options: McpChildOptions,
  ) {
    this.name = config.name;
    this.description = config.description;
    this.machine = new ChildStateMachine(config.name);
    this.clock = options.clock ?? systemClock;
    this.switchboard = options.switchboard;
    this.sessionOptions = { shutdownGraceMs: options.shutdownGraceMs, stateDir: options.stateDir };
    this.limits = { timeoutMs: config.timeoutMs, maxTotalTimeoutMs: config.maxTimeoutMs };
    this.idle = new IdleWatch(config.idleTimeoutMs, this.clock, () => void this.stopIfIdle());
    this.log = logger({ child: config.name });
    this.exposed = visibleTools(config, () => this.machine.running?.era, this.log);
    this.catalog = new CatalogShelf(options.stateDir, config);
    const store = config.url === undefined ? undefined : new TokenStore(options.stateDir, config.name, config.url);
    this.signIn = new SignInWatch(store, this.log, () => this.signedInMeanwhile());
    this.switchboard.onLogLevel(config.name, (level) => this.applyLogLevel(level));
    this.switchboard.onCallerGone((sessionId) => this.callers.forget(sessionId));
    this.switchboard.onRootsChanged(() => void this.machine.running?.client.sendRootsListChanged().catch(() => {}));
    this.switchboard.onClientDrained(() => this.newest?.hold.readAgain());
  }

  status(): ChildStatus {
    return statusIn(this.machine.phase, this.config.transport, {
      visibleTools: (tools) => this.exposed.of(tools).tools.length,
      restarts: Math.max(0, this.starts - 1),
      lastError: this.lastError ?? null,
      authFailed: this.lastFailure?.code === "AUTH_REQUIRED",
      stderrTail: this.stderr.tail(),
      stdoutNoise: this.stdoutNoise.view(),
    });
  }

  async tools(): Promise<Tool[]> {
    const known = this.machine.running?.cache.cachedTools;
    if (known) return this.exposed.of(known).tools;
    return this.exposed.of(await this.withSession("tools/list", (session) => session.cache.tools())).tools;
  }

  /** A catalogued tool is known too: calling it starts the child. */
  knownTool(name: string): Tool | undefined {
    const tools = this.machine.running ? this.machine.running.cache.cachedTools : this.catalog.read().tools;
    return tools && this.exposed.of(tools).byName.get(name);
  }

  known(): Partial<ChildSchema> {
    // A running child's own lists count: the catalog's may be what it just said changed.
    const { tools, ...rest } = this.machine.running ? { tools: this.machine.running.cache.cachedTools } : this.catalog.read();
    return { ...rest, ...(tools && { tools: this.exposed.of(tools).tools }) };
  }

  async schema(): Promise<ChildSchema> {
    const lists = await this.withSession("the schema lists", (session) => session.cache.all());
    return { ...lists, tools: this.exposed.of(lists.tools).tools };
  }

  /**
   * One tools/call, once the router's line has let it through: the router routes a real child's calls one
   * client at a time (RoutedChild.oneClientAtATime), so the child's own requests meanwhile go to that client.
   */
  callTool(name: string, args: Record<string, unknown>, ctx: CallContext, turn?: Turn): Promise<CallToolResult> {
    const params: Record<string, unknown> = { name, arguments: args };
    if (ctx.meta) params._meta = ctx.meta;
    return this.forwardFor(ctx, "tools/call", params, `tool "${name}"`, turn) as Promise<CallToolResult>;
  }

  async readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    const params = { uri, ...(ctx.meta && { _meta: ctx.meta }) };
    return this.passThrough("resources/read", params, ctx, `resources/read of ${uri}`) as Promise<ReadResourceResult>;
  }

  async getPrompt(name: string, args: Record<string, string> | undefined, ctx: CallContext): Promise<GetPromptResult> {
    const params = { name, ...(args && { arguments: args }), ...(ctx.meta && { _meta: ctx.meta }) };
    return this.passThrough("prompts/get", params, ctx, `prompt "${name}"`) as Promise<GetPromptResult>;
  }

  async complete(params: CompleteRequest["params"], ctx: CallContext): Promise<CompleteResult> {
    return this.passThrough("completion/complete", params, ctx, "completion/complete") as Promise<CompleteResult>;
  }

  /** Added after the session is had: a session started for this call would otherwise subscribe it twice. */
  async subscribe(uri: string): Promise<void> {
    await this.withSession(`resources/subscribe of ${uri}`, (session) => {
      this.subscriptions.add(uri);
      return session.client.subscribeResource({ uri });
    });
  }

  async unsubscribe(uri: string): Promise<void> {
    this.subscriptions.delete(uri);
    const session = this.machine.running;
    if (session) await this.request(session, `resources/unsubscribe of ${uri}`, () => session.client.unsubscribeResource({ uri }));
  }

  /** Applied now if the child is running and logs; every later session gets the switchboard's level when it starts. */
  private async applyLogLevel(level: LoggingLevel): Promise<void> {
    const session = this.machine.running;
    if (!session?.client.getServerCapabilities()?.logging) return;
    await this.request(session, "logging/setLevel", () => session.client.setLoggingLevel(level));
  }

  /** Requests other than tools/call skip the queue: they read, and must not wait behind long tool calls. */
  private passThrough(method: string, params: Record<string, unknown>, ctx: CallContext, what: string): Promise<Record<string, unknown>> {
    return this.forwardFor(ctx, method, params, what);
  }

  /**
   * A client's request at the child, as use of the child (the idle timeout counts from its end); meanwhile the
   * child's own requests may go to its caller. It is forwarded on the running session, started for it if needed (a
   * child that died while the call waited its turn is restarted for it). A request that never reached a remote
   * server (connection refused, or the server no longer knew the session) ran nowhere, so it is sent once more, on
   * a new session.
   */
  private async forwardFor(
    ctx: CallContext,
    method: string,
    params: Record<string, unknown>,
    what: string,
    turn?: Turn,
  ): Promise<Record<string, unknown>> {
    this.idle.begin();
    this.callers.begin(ctx.caller);
    try {
      for (let retried = false; ; retried = true) {
        const session = this.machine.running ?? (await this.ensureSession());
        try {
          return await exchangeInEra(session, method, params, this.limits, ctx, { child: this.name, what, queuedMs: turn?.queuedMs });
        } catch (error) {
          if (isRequestRefusal(error)) throw error;
          if (retried || !session.remote?.neverReached(error)) throw this.failure(error, session, what, turn);
          this.onSessionLost(session, error);
          this.log.info({ reason: errorChain(error) }, `${what} never reached the server; sending it on a new session`);
        }
      }
    } finally {
      this.callers.end(ctx.caller);
      // Its client may have been what held the output (see outputHeld).
      this.newest?.hold.readAgain();
      this.idle.end();
    }
  }

  /**
   * A running session's output is held while a call in flight is from a client that is not reading what it
   * was sent (what the child writes would only queue up for it); it is read again when a client drains or a call
   * ends. A session being started is always read, so that no start waits on a client.
   */
  private outputHeld(): boolean {
    return this.machine.phase.state === "running" && this.switchboard.servesBacklogged(this.callers);
  }

  /** Runs a request of gaggle's own on the session, started if needed, as use of the child. */
  private withSession<T>(what: string, run: (session: Session) => Promise<T>): Promise<T> {
    return this.idle.during(async () => {
      const session = this.machine.running ?? (await this.ensureSession());
      return this.request(session, what, () => run(session));
    });
  }

  /** A server's own background work is its own affair: gaggle sees only its calls. */
  background(): BackgroundWork[] {
    return [];
  }

  /** Ends the session and frees its process; an explicit close also forgets past failed starts, so the next call starts at once. */
  close(): Promise<{ uptimeMs: number | null }> {
    this.idle.stopped();
    this.signIn.started(false);
    // A call made from now on waits for a start after this stop, not for a start under way that the stop ends.
    this.pendingStart = undefined;
    // A start under way holds the lock until it ends: its session is closed so that it ends now, not at its timeout.
    if (this.machine.phase.state === "starting" && this.newest) abandonStart(this.newest);
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
    await closeSession(session, this.sessionOptions.shutdownGraceMs).catch((error: unknown) => this.log.warn({ err: error }, "error while closing"));
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
    // Waiting out the back-off helps nothing when a person had to sign in; once they have, the start is tried at once.
    if (phase.state === "failed" && wait > 0 && !this.signIn.signedInSince())
      return Promise.reject(backoffRefusal(this.name, phase.failedStarts, wait, this.lastError, this.lastFailure));
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
    const neededSignIn = this.status().needsAuth;
    this.machine.move({ state: "starting", failedStarts });
    let session: Session | undefined;
    try {
      const remote = this.config.transport === "stdio" ? undefined : await loadRemoteKit();
      session = await connectSession(() => this.newSession(remote), this.catalog, this.startupTimeoutMs, this.log);
      const level = this.switchboard.logLevel;
      await restoreSessionState(session, level, this.subscriptions, this.log, this.startupTimeoutMs);
      // A child that died while its state was restored has nothing to serve with.
      if (session.endedBecause !== undefined) throw new Error(session.endedBecause);
      const startedAt = new Date(this.clock.now());
      this.starts++;
      this.machine.move({ state: "running", session, startedAt });
      this.log.info({ pid: session.process?.pid, restarts: this.starts - 1 }, "session started");
      // A level a client set while this session was being restored is applied now.
      if (this.switchboard.logLevel !== level) void this.applyLogLevel(this.switchboard.logLevel!).catch(() => {});
      this.idle.started();
      this.signIn.started(false);
      if (neededSignIn) this.signInChanged();
      return session;
    } catch (error) {
      session ??= this.newest;
      await session?.wire.close().catch(() => {});
      throw this.startFailed(error, session, failedStarts + 1, neededSignIn);
    }
  }

  private newSession(remote: Session["remote"]): Session {
    return (this.newest = createSession({
      config: this.config,
      ...this.sessionOptions,
      stderr: this.stderr,
      stdoutNoise: this.stdoutNoise,
      log: this.log,
      events: this.switchboard,
      callers: this.callers,
      onClosed: (closed) => this.onSessionClosed(closed),
      onLost: (lost, error) => this.onSessionLost(lost, error),
      onStreamBroken: (broken) => this.checkConnection(broken),
      catalog: this.catalog,
      remote,
      outputHeld: () => this.outputHeld(),
    }));
  }

  /** A child that never started yet (nothing catalogued) may be fetching what it runs: see ChildConfig.firstStartupTimeoutMs. */
  private get startupTimeoutMs(): number {
    return this.catalog.everListed ? this.config.startupTimeoutMs : this.config.firstStartupTimeoutMs;
  }

  /** `session` is undefined when none could even be made. */
  private startFailed(error: unknown, session: Session | undefined, failedStarts: number, neededSignIn: boolean): GaggleError {
    this.lastError = `failed to start: ${startFailureReason(error, session, this.startupTimeoutMs)}`;
    this.machine.move({ state: "failed", failedStarts, retryAt: this.clock.now() + backoffMs(failedStarts) });
    this.lastFailure = startFailure(this.config, this.startupTimeoutMs, this.lastError, this.stderr.tail(), error);
    this.log.warn({ reason: this.lastError, hint: this.lastFailure.hint, failedStarts }, "start failed");
    this.signIn.started(this.lastFailure.code === "AUTH_REQUIRED");
    if (this.lastFailure.code === "AUTH_REQUIRED" && !neededSignIn) this.signInChanged();
    return this.lastFailure;
  }

  /**
   * The child came to need a sign-in, or started once signed in: what clients list of it changes (a sign-in tool
   * in its place, or its own lists), so they are told.
   */
  private signInChanged(): void {
    for (const kind of ["tools", "resources", "prompts"] as const) this.switchboard.listChanged(this.name, kind);
  }

  /**
   * New tokens were stored for a child waiting on a sign-in (by `gaggle auth login` in a shell, or a sign-in this
   * gateway runs): it starts now, not at its next call, and its clients hear that its lists changed.
   */
  private signedInMeanwhile(): void {
    if (this.machine.phase.state !== "failed" || this.pendingStart) return;
    this.log.info("new tokens stored; starting");
    void this.withSession("the schema lists", (session) => session.cache.all()).catch(() => {
      // Its failure is the child's state and log, as for any start.
    });
  }

  /** A running session that ends without gaggle asking fails the child; the next call starts it again at once. */
  private onSessionClosed(session: Session): void {
    if (this.machine.running !== session || session.closing) return;
    this.idle.stopped();
    this.lastError = `${session.endedBecause} unexpectedly`;
    this.machine.move({ state: "failed", failedStarts: 0, retryAt: 0 });
    this.log.warn({ reason: session.endedBecause }, "child ended unexpectedly; the next call restarts it");
  }

  /**
   * A remote session whose server is gone or forgot it: it fails the child like an exit, its other calls in
   * flight fail at once (closing the transport fails them), and the next call starts a new session.
   */
  private onSessionLost(session: Session, error: unknown): void {
    if (session.closing || session.endedBecause !== undefined) return;
    session.endedBecause = `lost its connection (${errorChain(error)})`;
    this.onSessionClosed(session);
    // After this turn: the request whose failure told of the loss gets it first (did it reach the server?); closing fails the others.
    setImmediate(() => void session.client.close().catch(() => {}));
  }

  /**
   * A response stream of a remote session broke. The SDK does not say whose, and the request it carried would
   * wait for its timeout: a ping tells whether the server is still there, and if not, the session is lost and
   * every call in flight fails at once.
   */
  private checkConnection(session: Session): void {
    if (this.machine.running === session) pingOrLose(session, this.config.timeoutMs, (error) => this.onSessionLost(session, error));
  }

  /** Runs a request on the session, turning whatever the SDK throws into a GaggleError. */
  private async request<T>(session: Session, what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw this.failure(error, session, what);
    }
  }

  /** What the SDK or the child's wire threw, as a GaggleError that says what happened to the child. */
  private failure(error: unknown, session: Session, what: string, turn?: Turn): GaggleError {
    if (session.remote?.connectionLost(error)) {
      // A request that could not be sent is the session's end, told as the end of a session is. The SDK's transports
      // tell onerror first, which ended the session already; the request gets its own error here, since the close waits a turn.
      this.onSessionLost(session, error);
      error = new McpError(ErrorCode.ConnectionClosed, errorChain(error));
    }
    return callFailure(error, {
      child: this.name,
      what,
      queue: turn?.queue,
      endedBecause: session.endedBecause,
      closing: session.closing,
      stderrTail: this.stderr.tail(),
    });
  }

  /** Checked again under the lock: a request that came in meanwhile keeps the session. */
  private stopIfIdle(): Promise<void> {
    return this.lock.run(async () => {
      if (!this.idle.expired || !this.machine.running) return;
      this.log.info({ idleMs: this.config.idleTimeoutMs }, "idle timeout; stopping");
      await this.stop();
    });
  }
}
