// Owns one agent session: its ACP session in the agent's process, its turns (one at a time, the rest queued), its
// transcript, and what gaggle answers the agent for it (permissions, files, terminals), confined to its roots.
import type * as acp from "@agentclientprotocol/sdk";
import { unlessAborted } from "../../children/calls/cancellation.js";
import type { AgentConfig } from "../../config/agents.js";
import { GaggleError, errorMessage } from "../../shared/errors.js";
import { timerDelay } from "../../shared/timer-delay.js";
import { formatDuration, oneLine } from "../goose/format.js";
import { Transcript } from "../goose/transcript.js";
import type { ProcessTable } from "../process/process-table.js";
import type { Place } from "../workspace/place.js";
import type { CallRoots } from "../workspace/roots.js";
import type { AcpClientSide, AgentProcess } from "./agent-process.js";
import { outsideOf, readTextFile, sessionPlace, writeTextFile } from "./client-files.js";
import { answerPermission, toolCallPaths } from "./permissions.js";
import { SessionTerminals } from "./terminals.js";
import { TranscriptWriter } from "./transcript-lines.js";
import { Turn, type PromptSource, type TurnOutcome } from "./turn.js";

export type SessionStatus = "starting" | "idle" | "working" | "released" | "failed";
/** What a session needs of the child that holds it. */
export interface SessionHost {
  /** The agent's process serving the session's principal, started if it is not running. */
  process(): Promise<AgentProcess>;
  readonly terminals: ProcessTable | undefined;
  /** The transcript grew (called at most every few hundred ms). */
  transcriptChanged(session: AgentSession): void;
  turnEnded(session: AgentSession, turn: Turn): void;
  /** Released by itself: it was idle for idle_release_minutes. */
  idle(session: AgentSession): void;
  /** It failed (its start, or its process's restart): it takes no more prompts, and its process may serve no one now. */
  failed(session: AgentSession): void;
}

/** Who follows one session's turns besides the child that holds it (a team member's roster); handed in at its start. */
export interface SessionFollower {
  turnStarted(session: AgentSession, turn: Turn): void;
  turnEnded(session: AgentSession, turn: Turn): void;
  /** Released or failed: it takes no more prompts, and its queued ones were dropped. */
  ended(session: AgentSession): void;
}

/** What a session may start with besides its folder and roots. */
export interface SessionOptions {
  /** An ACP session of this agent to resume (session/load) rather than a new one. */
  loadFrom?: string | undefined;
  /** When the agent cannot load sessions, `loadFrom` is left and a new conversation starts instead of failing. */
  newIfUnloadable?: boolean;
  /** MCP servers the agent is to connect to (only those of a transport it declares it takes are passed). */
  mcpServers?: acp.McpServer[];
  follower?: SessionFollower | undefined;
}

/** How often, at most, a growing transcript is announced. */
const CHANGE_EVERY_MS = 200;

export class AgentSession implements AcpClientSide {
  status: SessionStatus = "starting";
  problem: string | undefined;
  releaseNote: string | undefined;
  readonly createdAt = new Date();
  lastActivity = new Date();
  readonly transcript: Transcript;
  /** The ACP session id, once the agent has made (or loaded) it. */
  acpSessionId: string | undefined;
  readonly turns: Turn[] = [];
  private readonly writer: TranscriptWriter;
  private readonly terminals: SessionTerminals;
  /** Where the agent may reach: the session's roots, relative paths from its folder. */
  private readonly place: Place;
  private readonly watchers = new Set<() => void>();
  private attached: AgentProcess | undefined;
  private connecting: Promise<AgentProcess> | undefined;
  private running: Turn | undefined;
  /** Set while a lost session is loaded again: the agent's replay of the conversation is in the transcript already. */
  private muted = false;
  /** It had an ACP session in an agent process once: a later load is of a conversation shown already. */
  private connected = false;
  private changeTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly id: string,
    readonly config: AgentConfig,
    /** The principal that started it: only it sees, prompts, cancels and releases it. */
    readonly owner: string,
    /** The client session that started it. */
    readonly startedBy: string | undefined,
    readonly cwd: string,
    readonly roots: CallRoots,
    private readonly host: SessionHost,
    private readonly options: SessionOptions = {},
  ) {
    const loadFrom = options.loadFrom;
    this.transcript = new Transcript(config.maxOutputBytes);
    this.writer = new TranscriptWriter(this.transcript, config.maxOutputBytes);
    this.terminals = new SessionTerminals(host.terminals, { principal: owner, session: startedBy ?? "local" });
    this.place = sessionPlace(`[agents.${config.name}] roots`, cwd, roots);
    this.acpSessionId = loadFrom;
    this.writer.note("gaggle", `session of agent "${config.name}" in ${cwd}${loadFrom ? `, resuming ACP session ${loadFrom}` : ""}`);
  }

  get queued(): Turn[] {
    return this.turns.filter((turn) => turn.state === "queued");
  }

  get current(): Turn | undefined {
    return this.running;
  }

  get live(): boolean {
    return this.status !== "released" && this.status !== "failed";
  }

  get pid(): number | undefined {
    return this.attached?.alive ? this.attached.pid : undefined;
  }

  /** Makes the ACP session now, so that a session started without a prompt is ready for its first one. */
  open(): void {
    this.ensure().then(
      () => {
        if (this.status === "starting") this.status = this.running ? "working" : "idle";
        this.armIdle();
      },
      () => {},
    );
  }

  /** Queues a prompt; it runs once the turns before it have ended. */
  send(text: string, source: PromptSource): Turn {
    if (!this.live) {
      throw new GaggleError(
        "INVALID_ARGS",
        `session ${this.id} is ${this.status}${this.releaseNote || this.problem ? ` (${this.releaseNote ?? this.problem})` : ""}`,
        {
          hint: "start a new session with start_agent; get_agent_output still shows this one's transcript",
        },
      );
    }
    const turn = new Turn(this.turns.length + 1, text, source);
    this.turns.push(turn);
    this.lastActivity = new Date();
    void this.pump();
    return turn;
  }

  /** Cancels the running turn (session/cancel); queued prompts still run after it. False when none runs. */
  cancel(note: string): boolean {
    const turn = this.running;
    if (!turn) return false;
    this.writer.note("gaggle", `cancelling prompt ${turn.number}: ${note}`);
    turn.abort.abort();
    if (this.attached && this.acpSessionId) this.attached.cancel(this.acpSessionId);
    return true;
  }

  /** Ends the session: the running turn is cancelled, queued prompts dropped, its terminals stopped. */
  async release(note: string): Promise<{ wasWorking: boolean; dropped: number }> {
    if (this.status === "released") return { wasWorking: false, dropped: 0 };
    const wasWorking = this.running !== undefined;
    const dropped = this.queued;
    for (const turn of dropped) turn.end("dropped", note);
    this.cancel(note);
    this.status = "released";
    this.releaseNote = note;
    clearTimeout(this.idleTimer);
    this.writer.note("gaggle", `released: ${note}`);
    this.running?.end("cancelled", note);
    if (this.attached && this.acpSessionId) this.attached.close(this.acpSessionId);
    this.attached = undefined;
    await this.terminals.stopAll();
    this.changed();
    this.options.follower?.ended(this);
    return { wasWorking, dropped: dropped.length };
  }

  /** The agent's process ended: the conversation goes on in a new one (session/load) if the agent can load sessions. */
  processLost(why: string): void {
    this.attached = undefined;
    this.connecting = undefined;
    if (this.live) this.writer.note("gaggle", `the agent's process ended (${why})`);
    this.changed();
  }

  /** Calls `watcher` whenever the transcript grows, until the returned function is called. */
  watch(watcher: () => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  // ---- what the agent asks of the session

  update(update: acp.SessionUpdate): void {
    if (this.muted) return;
    this.writer.update(update);
    this.changed();
  }

  async requestPermission(request: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse> {
    const turn = this.running;
    if (!turn || turn.abort.signal.aborted) return { outcome: { outcome: "cancelled" } };
    clearTimeout(this.idleTimer);
    const answer = await answerPermission({
      request,
      ask: turn.source.ask,
      policy: this.config.permission,
      timeoutMs: this.config.permissionTimeoutSeconds * 1000,
      signal: AbortSignal.any([signal, turn.abort.signal]),
      who: `Agent "${this.config.name}" (session ${this.id})`,
      note: (text) => this.writer.note("permission", text),
      outside: await outsideOf(this.place, toolCallPaths(request.toolCall)),
    });
    this.changed();
    return answer;
  }

  async readTextFile(request: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse> {
    return this.recorded(`read ${request.path}`, () => readTextFile(this.place, request));
  }

  async writeTextFile(request: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse> {
    return this.recorded(`write ${request.path}`, () => writeTextFile(this.place, request));
  }

  createTerminal(request: acp.CreateTerminalRequest): Promise<acp.CreateTerminalResponse> {
    const line = [request.command, ...(request.args ?? [])].join(" ");
    return this.recorded(`terminal: ${oneLine(line, 200)}`, () => this.terminals.create(this.place, request));
  }

  async terminalOutput(request: acp.TerminalOutputRequest): Promise<acp.TerminalOutputResponse> {
    return this.terminals.output(request);
  }

  waitForTerminalExit(request: acp.WaitForTerminalExitRequest, signal: AbortSignal): Promise<acp.WaitForTerminalExitResponse> {
    return this.terminals.waitForExit(request, signal);
  }

  killTerminal(request: acp.KillTerminalRequest): Promise<acp.KillTerminalResponse> {
    return this.terminals.kill(request);
  }

  releaseTerminal(request: acp.ReleaseTerminalRequest): Promise<acp.ReleaseTerminalResponse> {
    return this.terminals.release(request);
  }

  // ---- inside

  /** A refusal is written into the transcript too, so that the person reading it sees what the agent was refused. */
  private async recorded<T>(what: string, run: () => T | Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      this.writer.note("refused", `${what}: ${errorMessage(error)}`);
      this.changed();
      throw error;
    }
  }

  private ensure(): Promise<AgentProcess> {
    if (!this.connecting) {
      const connecting = this.connect();
      this.connecting = connecting;
      connecting.catch((error: unknown) => {
        if (this.connecting === connecting) this.connecting = undefined;
        this.fail(errorMessage(error));
      });
    }
    return this.connecting;
  }

  private async connect(): Promise<AgentProcess> {
    const process = await this.host.process();
    if (!this.live) throw new GaggleError("SESSION_ERROR", `session ${this.id} was released while it started`);
    const acpId = this.acpSessionId;
    const servers = this.mcpServersFor(process);
    const unloadable = acpId !== undefined && !process.capabilities.loadSession && this.options.newIfUnloadable === true;
    if (unloadable) this.writer.note("gaggle", `agent "${this.config.name}" cannot load ACP session ${acpId}: a new conversation starts`);
    if (acpId === undefined || unloadable) {
      const made = await process.newSession(this.cwd, this.roots.client ?? this.roots.configured, servers);
      this.acpSessionId = made;
      process.attach(made, this);
    } else {
      if (!process.capabilities.loadSession) {
        throw new GaggleError(
          "SESSION_ERROR",
          `agent "${this.config.name}" cannot load sessions (it does not offer session/load), so ACP session ${acpId} cannot be resumed`,
          {
            hint: "start a new session with start_agent",
          },
        );
      }
      // A conversation this session already showed is not shown twice: only a resumed one's history is new here.
      this.muted = this.connected;
      try {
        await process.loadSession(acpId, this.cwd, this, servers);
      } finally {
        this.muted = false;
      }
      this.writer.note("gaggle", `ACP session ${acpId} loaded`);
    }
    // Released while the agent made or loaded it (its owner let in no more, say): the agent's session is closed, not kept.
    if (!this.live) {
      if (this.acpSessionId) process.close(this.acpSessionId);
      throw new GaggleError("SESSION_ERROR", `session ${this.id} was released while it started`);
    }
    this.attached = process;
    this.connected = true;
    return process;
  }

  /** The session's MCP servers the agent takes (see AgentProcess.takes); the transcript names those it does not. */
  private mcpServersFor(process: AgentProcess): acp.McpServer[] {
    const given = this.options.mcpServers ?? [];
    const taken = process.takes(given);
    const left = given.filter((server) => !taken.includes(server)).map((server) => server.name);
    if (left.length > 0)
      this.writer.note("gaggle", `agent "${this.config.name}" takes no HTTP MCP servers (mcpCapabilities.http): it runs without ${left.join(", ")}`);
    return taken;
  }

  private fail(problem: string): void {
    if (!this.live) return;
    this.status = "failed";
    this.problem = problem;
    this.writer.note("gaggle", `failed: ${problem}`);
    for (const turn of this.queued) turn.end("dropped", problem);
    this.changed();
    this.options.follower?.ended(this);
    this.host.failed(this);
  }

  private async pump(): Promise<void> {
    if (this.running || !this.live) return;
    const turn = this.queued[0];
    if (!turn) return;
    this.running = turn;
    turn.begin();
    this.status = "working";
    clearTimeout(this.idleTimer);
    this.writer.prompt(turn.number, turn.text);
    this.changed();
    this.options.follower?.turnStarted(this, turn);
    const limitMs = this.config.promptTimeoutMinutes * 60_000;
    let timer: NodeJS.Timeout | undefined;
    let outcome: TurnOutcome;
    try {
      // A turn cancelled while the agent starts ends then; the start goes on for the session's next prompt.
      const process = await unlessAborted(this.ensure(), turn.abort.signal);
      if (!process || turn.abort.signal.aborted) outcome = { state: "cancelled", problem: "cancelled before it started" };
      else {
        // Counted from when the agent has the prompt: starting its process is not the turn's time.
        timer = setTimeout(() => {
          turn.timedOut = `it ran past prompt_timeout_minutes (${formatDuration(limitMs)})`;
          this.cancel(turn.timedOut);
        }, timerDelay(limitMs));
        timer.unref();
        turn.reached = true;
        outcome = turn.answered((await process.prompt(this.acpSessionId!, turn.text)).stopReason);
      }
    } catch (error) {
      outcome = turn.failedWith(error);
    } finally {
      clearTimeout(timer);
    }
    // The answer is in place before anyone waiting on the turn hears that it ended.
    turn.answer = this.writer.answer;
    turn.end(outcome.state, outcome.problem);
    this.writer.note(`prompt ${turn.number}`, `${turn.state}${turn.problem ? `: ${turn.problem}` : ""}`);
    this.running = undefined;
    this.lastActivity = new Date();
    if (this.live) this.status = "idle";
    this.changed();
    this.host.turnEnded(this, turn);
    this.options.follower?.turnEnded(this, turn);
    this.armIdle();
    void this.pump();
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    const minutes = this.config.idleReleaseMinutes;
    if (minutes === 0 || !this.live || this.running || this.queued.length > 0) return;
    this.idleTimer = setTimeout(() => this.host.idle(this), timerDelay(minutes * 60_000));
    this.idleTimer.unref();
  }

  /** Announces the growth once per CHANGE_EVERY_MS at most; the last change is always announced. */
  private changed(): void {
    if (this.changeTimer) return;
    this.changeTimer = setTimeout(() => {
      this.changeTimer = undefined;
      this.host.transcriptChanged(this);
      for (const watcher of this.watchers) watcher();
    }, CHANGE_EVERY_MS);
    this.changeTimer.unref();
  }
}
