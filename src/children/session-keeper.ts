// The life of a real child's one pooled session: its starts (one at a time, shared by every caller that needs it),
// its stops, the back-off after failed starts, a sign-in it waits on, its loss, and its idle timeout.
import { ErrorCode, McpError, type LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { ChildConfig } from "../config/index.js";
import type { Clock } from "../shared/clock.js";
import { errorChain, sayToPerson, type GaggleError } from "../shared/errors.js";
import type { Logger } from "../shared/log.js";
import type { CancelState } from "../shared/observer.js";
import { backoffMs } from "./backoff.js";
import { backoffRefusal, callFailure, cancelledFailure, startFailure } from "./calls/call-failure.js";
import type { CloseReason, Turn } from "./child.js";
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
import { ChildStateMachine, OperationLock, type Phase } from "./child-state.js";
import type { CatalogShelf } from "./catalog.js";
import { IdleWatch } from "./idle-watch.js";
import { SignInWatch } from "./oauth/sign-in-watch.js";
import { TokenStore } from "./oauth/token-store.js";
import type { StderrRing } from "./processes/stderr-ring.js";
import type { StdoutNoise } from "./processes/stdout-noise.js";
import type { Switchboard } from "./switchboard.js";
import type { CallerTracker } from "./wire/caller-tracker.js";

/** What a session is made with; the keeper's owner (McpChild) keeps the same objects for its status and calls. */
export interface SessionParts {
  config: ChildConfig;
  /** Time a stdio child gets after SIGTERM before its process group is killed. */
  shutdownGraceMs: number;
  /** How long a stdio child has to answer server/discover before it is taken for a 2025 server; a test shortens it. */
  probeTimeoutMs?: number;
  /** Where a remote child's sign-in (OAuth client and tokens) is kept. */
  stateDir: string;
  /** Every time the keeper reads: the back-off, the idle timeout, start times and uptime. */
  clock: Clock;
  switchboard: Switchboard;
  log: Logger;
  stderr: StderrRing;
  stdoutNoise: StdoutNoise;
  callers: CallerTracker;
  catalog: CatalogShelf;
  /** Kept across sessions: a restarted child gets the same subscriptions (and the switchboard's log level). */
  subscriptions: ReadonlySet<string>;
  /** Whether a running session's output is held for a client that is not reading (see McpChild.outputHeld). */
  outputHeld: () => boolean;
}

/** The session's life is the state machine in child-state.ts; starts and stops run one at a time under one lock, and calls that arrive while a start is under way share it. */
export class SessionKeeper {
  private readonly machine: ChildStateMachine;
  private readonly lock = new OperationLock();
  /** The start under way or queued behind a stop: every caller that needs the session meanwhile waits for this one. */
  private pendingStart: Promise<Session> | undefined;
  private starts = 0; // sessions started so far: the first is a start, the rest restarts
  private newestSession: Session | undefined; // the session made last: while a start is under way, the one starting
  private failedBecause: string | undefined;
  /** The stderr lines of the start that failed last: a back-off refusal repeats them, as the failure did. */
  private failedStderr: string[] = [];
  private failure: GaggleError | undefined;
  private readonly signIn: SignInWatch;
  /** Every request at the child, tool calls or others, is use; the idle timeout counts from the last. */
  readonly idle: IdleWatch;

  constructor(private readonly parts: SessionParts) {
    const { config } = parts;
    this.machine = new ChildStateMachine(config.name);
    this.idle = new IdleWatch(config.idleTimeoutMs, parts.clock, () => void this.stopIfIdle());
    const store = config.url === undefined ? undefined : new TokenStore(parts.stateDir, config.name, config.url);
    this.signIn = new SignInWatch(store, parts.log, () => this.signedInMeanwhile());
  }

  get running(): Session | undefined {
    return this.machine.running;
  }

  get phase(): Phase {
    return this.machine.phase;
  }

  /** The session made last, running or starting. */
  get newest(): Session | undefined {
    return this.newestSession;
  }

  get restarts(): number {
    return Math.max(0, this.starts - 1);
  }

  /** Why the last start failed or the last session ended; undefined while none has. */
  get lastError(): string | undefined {
    return this.failedBecause;
  }

  /** The error the last failed start was refused with. */
  get lastFailure(): GaggleError | undefined {
    return this.failure;
  }

  /** The running session, or the one start every caller waits for; refused while the back-off after failed starts lasts. */
  ensure(): Promise<Session> {
    const running = this.machine.running;
    if (running) return Promise.resolve(running);
    if (this.pendingStart) return this.pendingStart;
    const phase = this.machine.phase;
    const wait = phase.state === "failed" ? phase.retryAt - this.parts.clock.now() : 0;
    if (phase.state !== "failed" || wait <= 0) return this.start();
    const refusal = backoffRefusal(this.parts.config.name, phase.failedStarts, wait, this.failedBecause, this.failedStderr, this.failure);
    // Waiting out the back-off helps nothing when a person had to sign in; once they have, the start is tried at once.
    return this.signIn.signedInSince().then((signedIn) => {
      if (!signedIn) throw refusal;
      return this.start();
    });
  }

  /** The running session, else the start under way, else a new start. */
  private start(): Promise<Session> {
    const running = this.machine.running;
    if (running) return Promise.resolve(running);
    if (this.pendingStart) return this.pendingStart;
    const start = this.lock.run(() => this.startSession());
    this.pendingStart = start;
    const clear = () => {
      if (this.pendingStart === start) this.pendingStart = undefined;
    };
    start.then(clear, clear);
    return start;
  }

  /** Runs a request of gaggle's own on the session, started if needed, as use of the child. */
  withSession<T>(what: string, run: (session: Session) => Promise<T>): Promise<T> {
    return this.idle.during(async () => {
      const session = this.machine.running ?? (await this.ensure());
      return this.request(session, what, () => run(session));
    });
  }

  /** Runs a request on the session, turning whatever the SDK throws into a GaggleError. */
  async request<T>(session: Session, what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw this.failureOf(error, session, what);
    }
  }

  /** Applied now if the child is running and logs; every later session gets the switchboard's level when it starts. */
  async applyLogLevel(level: LoggingLevel): Promise<void> {
    const session = this.machine.running;
    if (!session?.client.getServerCapabilities()?.logging) return;
    await this.request(session, "logging/setLevel", () => session.client.setLoggingLevel(level));
  }

  /**
   * What the SDK or the child's wire threw, as a GaggleError that says what happened to the child. A request whose
   * `cancel` is aborted (its client cancelled it, or the client's session ended) failed for that: no failure of the
   * child's, and no sign of a lost connection.
   */
  failureOf(error: unknown, session: Session, what: string, turn?: Turn, cancel?: CancelState): GaggleError {
    if (cancel?.aborted) return cancelledFailure(this.parts.config.name, what, cancel.reason, error);
    if (session.remote?.connectionLost(error)) {
      // A request that could not be sent is the session's end, told as the end of a session is. The SDK's transports
      // tell onerror first, which ended the session already; the request gets its own error here, since the close waits a turn.
      this.lost(session, error);
      error = new McpError(ErrorCode.ConnectionClosed, errorChain(error));
    }
    return callFailure(error, {
      child: this.parts.config.name,
      what,
      queue: turn?.queue,
      endedBecause: session.endedBecause,
      closing: session.closing,
      closedBecause: session.closedBecause,
      stderrTail: this.parts.stderr.since(session.stderrFrom),
    });
  }

  /**
   * Ends the session and frees its process; an explicit close also forgets past failed starts, so the next call
   * starts at once. `why` is what its calls in flight are told.
   */
  close(why?: CloseReason): Promise<{ uptimeMs: number | null }> {
    this.idle.stopped();
    this.signIn.started(false);
    // A call made from now on waits for a start after this stop, not for a start under way that the stop ends.
    this.pendingStart = undefined;
    // A start under way holds the lock until it ends: its session is closed so that it ends now, not at its timeout.
    if (this.machine.phase.state === "starting" && this.newestSession) abandonStart(this.newestSession);
    return this.lock.run(() => this.stop(why));
  }

  /**
   * A remote session whose server is gone or forgot it: it fails the child like an exit, its other calls in
   * flight fail at once (closing the transport fails them), and the next call starts a new session.
   */
  lost(session: Session, error: unknown): void {
    if (session.closing || session.endedBecause !== undefined) return;
    session.endedBecause = `lost its connection (${errorChain(error)})`;
    this.onSessionClosed(session);
    // After this turn: the request whose failure told of the loss gets it first (did it reach the server?); closing fails the others.
    setImmediate(() => void session.client.close().catch(() => {}));
  }

  /** Runs under the lock. */
  private async stop(why?: CloseReason): Promise<{ uptimeMs: number | null }> {
    const phase = this.machine.phase;
    if (phase.state !== "running") {
      if (phase.state === "failed") this.machine.move({ state: "stopped" });
      return { uptimeMs: null };
    }
    const { session, startedAt } = phase;
    const uptimeMs = this.parts.clock.now() - startedAt.getTime();
    this.machine.move({ state: "stopping", session, startedAt });
    await closeSession(session, this.parts.shutdownGraceMs, why).catch((error: unknown) =>
      this.parts.log.warn({ err: error }, "error while closing"),
    );
    this.machine.move({ state: "stopped" });
    this.parts.log.info({ uptimeMs }, "session closed");
    return { uptimeMs };
  }

  /** Runs under the lock, so it begins only once a stop before it has finished. */
  private async startSession(): Promise<Session> {
    const before = this.machine.phase;
    if (before.state === "running") return before.session;
    const failedStarts = before.state === "failed" ? before.failedStarts : 0;
    const neededSignIn = before.state === "failed" && this.failure?.code === "AUTH_REQUIRED";
    this.machine.move({ state: "starting", failedStarts });
    this.signIn.attempting();
    const { switchboard, log } = this.parts;
    let session: Session | undefined;
    try {
      const remote = this.parts.config.transport === "stdio" ? undefined : await loadRemoteKit();
      session = await connectSession(() => this.newSession(remote), this.parts.catalog, this.startupTimeoutMs, log);
      const level = switchboard.logLevel;
      await restoreSessionState(session, level, this.parts.subscriptions, log, this.startupTimeoutMs);
      // A child that died while its state was restored has nothing to serve with.
      if (session.endedBecause !== undefined) throw new Error(session.endedBecause);
      const startedAt = new Date(this.parts.clock.now());
      this.starts++;
      this.machine.move({ state: "running", session, startedAt });
      log.info({ pid: session.process?.pid, restarts: this.starts - 1 }, "session started");
      // A level a client set while this session was being restored is applied now.
      if (switchboard.logLevel !== level) void this.applyLogLevel(switchboard.logLevel!).catch(() => {});
      this.idle.started();
      this.signIn.started(false);
      if (neededSignIn) this.signInChanged();
      return session;
    } catch (error) {
      session ??= this.newestSession;
      await session?.wire.close().catch(() => {});
      throw this.startFailed(error, session, failedStarts + 1, neededSignIn);
    }
  }

  private newSession(remote: Session["remote"]): Session {
    const { config, shutdownGraceMs, probeTimeoutMs, stateDir, stderr, stdoutNoise, log, switchboard, callers, catalog, outputHeld } = this.parts;
    return (this.newestSession = createSession({
      config,
      shutdownGraceMs,
      probeTimeoutMs,
      stateDir,
      stderr,
      stdoutNoise,
      log,
      events: switchboard,
      callers,
      onClosed: (closed) => this.onSessionClosed(closed),
      onLost: (lost, error) => this.lost(lost, error),
      onStreamBroken: (broken) => this.checkConnection(broken),
      catalog,
      remote,
      outputHeld,
    }));
  }

  /** A child that never started yet (nothing catalogued) may be fetching what it runs: see ChildConfig.firstStartupTimeoutMs. */
  private get startupTimeoutMs(): number {
    return this.parts.catalog.everListed ? this.parts.config.startupTimeoutMs : this.parts.config.firstStartupTimeoutMs;
  }

  /** `session` is undefined when none could even be made. */
  private startFailed(error: unknown, session: Session | undefined, failedStarts: number, neededSignIn: boolean): GaggleError {
    const { config, clock, stderr, log } = this.parts;
    this.failedBecause = `failed to start: ${startFailureReason(error, session, this.startupTimeoutMs)}`;
    this.machine.move({ state: "failed", failedStarts, retryAt: clock.now() + backoffMs(failedStarts) });
    // The lines of the run that failed: a child started again after the era probe ended it wrote its first run's too.
    const lines = session ? stderr.since(session.stderrFrom) : stderr.tail();
    this.failedStderr = lines;
    this.failure = startFailure(config, this.startupTimeoutMs, this.failedBecause, lines, error);
    // The log is read by a person, who has the command line rather than the meta-tools.
    log.warn({ reason: this.failedBecause, hint: this.failure.hintFor(sayToPerson), failedStarts }, "start failed");
    this.signIn.started(this.failure.code === "AUTH_REQUIRED");
    if (this.failure.code === "AUTH_REQUIRED" && !neededSignIn) this.signInChanged();
    return this.failure;
  }

  /**
   * The child came to need a sign-in, or started once signed in: what clients list of it changes (a sign-in tool
   * in its place, or its own lists), so they are told.
   */
  private signInChanged(): void {
    for (const kind of ["tools", "resources", "prompts"] as const) this.parts.switchboard.listChanged(this.parts.config.name, kind);
  }

  /**
   * New tokens were stored for a child waiting on a sign-in (by `gaggle auth login` in a shell, or a sign-in this
   * gateway runs): it starts now, not at its next call, and its clients hear that its lists changed.
   */
  private signedInMeanwhile(): void {
    if (this.machine.phase.state !== "failed" || this.pendingStart) return;
    this.parts.log.info("new tokens stored; starting");
    void this.withSession("the schema lists", (session) => session.cache.all()).catch(() => {
      // Its failure is the child's state and log, as for any start.
    });
  }

  /** A running session that ends without gaggle asking fails the child; the next call starts it again at once. */
  private onSessionClosed(session: Session): void {
    if (this.machine.running !== session || session.closing) return;
    this.idle.stopped();
    this.failedBecause = `${session.endedBecause} unexpectedly`;
    this.machine.move({ state: "failed", failedStarts: 0, retryAt: 0 });
    this.parts.log.warn({ reason: session.endedBecause }, "child ended unexpectedly; the next call restarts it");
  }

  /**
   * A response stream of a remote session broke. The SDK does not say whose, and the request it carried would
   * wait for its timeout: a ping tells whether the server is still there, and if not, the session is lost and
   * every call in flight fails at once.
   */
  private checkConnection(session: Session): void {
    if (this.machine.running === session) pingOrLose(session, this.parts.config.timeoutMs, (error) => this.lost(session, error));
  }

  /** Checked again under the lock: a request that came in meanwhile keeps the session. */
  private stopIfIdle(): Promise<void> {
    return this.lock.run(async () => {
      if (!this.idle.expired || !this.machine.running) return;
      this.parts.log.info({ idleMs: this.parts.config.idleTimeoutMs }, "idle timeout; stopping");
      await this.stop();
    });
  }
}
