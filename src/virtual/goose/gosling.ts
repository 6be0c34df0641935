// Owns one gosling: a named Goose session, its prompts run one turn (one `goose run`) at a time, and its state.
import { errorMessage } from "../../shared/errors.js";
import { formatDuration } from "./format.js";
import { timerDelay } from "../../shared/timer-delay.js";
import type { RunOption } from "../../config/virtual/goose-options.js";
import type { TurnFacts } from "./stream-json.js";
import { Transcript } from "./transcript.js";
import type { ProcessExit } from "../../children/processes/group-process.js";
import type { GoslingTurns, RunningTurn } from "./turns.js";

export type GoslingStatus = "running" | "completed" | "error" | "released";
export type PromptState = "queued" | "running" | "completed" | "error" | "cancelled";
export type GoslingKind = "run_goose" | "dispatch_agent" | "team_member";

export interface PromptEntry {
  /** 1-based, in the order prompts were sent. */
  number: number;
  text: string;
  at: Date;
  state: PromptState;
  /** The client session that sent it; it is told when the turn ends. */
  sessionId: string | undefined;
  startedAt?: Date;
  endedAt?: Date;
  tokens?: number | null;
  /** The turn's final assistant text. */
  answer?: string;
  /** Why the turn failed or did not run. */
  problem?: string;
}

/** What a gosling needs from the child that owns it. */
export interface GoslingHost {
  readonly maxOutputBytes: number;
  readonly maxRuntimeMs: number;
  /** 0 = never. */
  readonly idleReleaseMs: number;
  turnStarted(gosling: Gosling, prompt: PromptEntry): void;
  turnEnded(gosling: Gosling, prompt: PromptEntry): void;
  /** A systemNotification Goose printed (stream-json only). */
  notice(gosling: Gosling, text: string): void;
  /** Releases the gosling as release_gosling does: used when it has been idle for idle_release_minutes. */
  release(gosling: Gosling, note: string): Promise<unknown>;
}

/** How many stderr lines of a failed turn go into the transcript. */
const STDERR_LINES = 20;

/**
 * Status: `running` while a turn runs or waits in the queue; then `completed` or `error` (idle), by how its last
 * turn ended, and `running` again on a follow-up; `released` at any point, for good. One drain loop at a time
 * runs the queue; release() stops the running turn and waits for that loop, so no process outlives it.
 */
export class Gosling {
  readonly transcript: Transcript;
  readonly prompts: PromptEntry[] = [];
  readonly createdAt = new Date();
  status: GoslingStatus = "running";
  /** The session's token count as Goose last reported it. */
  tokens: number | null = null;
  releasedAt: Date | undefined;
  releaseNote: string | undefined;
  /** When it last turned working or idle. */
  activitySince = new Date();
  private workedMs = 0;
  /** Whether an earlier turn got far enough for Goose to have created the session. */
  private resumable: boolean;
  private current: { prompt: PromptEntry; process: RunningTurn | undefined; stopReason?: "release" | "runtime" } | undefined;
  private draining: Promise<void> | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly settled = new Map<number, () => void>();
  private readonly waits = new Map<number, Promise<void>>();

  constructor(
    readonly id: string,
    readonly session: string,
    readonly kind: GoslingKind,
    readonly options: readonly RunOption[],
    readonly cwd: string,
    private readonly host: GoslingHost,
    /** How its turns run (goose run, or its own goose acp process); closed when it is released. */
    private readonly turns: GoslingTurns,
    /** True for a gosling that continues a Goose session an earlier gosling created: every turn resumes it. */
    continues = false,
  ) {
    this.transcript = new Transcript(host.maxOutputBytes);
    this.resumable = continues;
  }

  get working(): boolean {
    return this.draining !== undefined;
  }

  /** Its conversation as a later gosling continues it: the ACP session id over goose acp, else its Goose session name. */
  get conversation(): string {
    return this.turns.conversation ?? this.session;
  }

  /** How its turns run ("goose run" or "goose acp"), once its first turn has started. */
  get transport(): string | undefined {
    return this.turns.transport;
  }

  get queued(): PromptEntry[] {
    return this.prompts.filter((prompt) => prompt.state === "queued");
  }

  get running(): PromptEntry | undefined {
    return this.current?.prompt;
  }

  /** Work time of all turns so far, the running one included. */
  runtimeMs(now = Date.now()): number {
    const started = this.current?.prompt.startedAt;
    return this.workedMs + (started ? now - started.getTime() : 0);
  }

  /** Queues a prompt; it runs at once when no turn is running. Limits are checked by the caller. */
  send(text: string, sessionId: string | undefined): PromptEntry {
    const prompt: PromptEntry = { number: this.prompts.length + 1, text, at: new Date(), state: "queued", sessionId };
    this.prompts.push(prompt);
    this.waits.set(prompt.number, new Promise((resolve) => this.settled.set(prompt.number, resolve)));
    clearTimeout(this.idleTimer);
    if (!this.draining) this.startDraining();
    return prompt;
  }

  /** Resolves when the prompt's turn has ended (or it was cancelled). */
  async ended(prompt: PromptEntry): Promise<PromptEntry> {
    await this.waits.get(prompt.number);
    return prompt;
  }

  /** Stops the running turn, drops the queued ones; the transcript stays. */
  async release(note: string): Promise<{ wasWorking: boolean; dropped: number }> {
    if (this.status === "released") return { wasWorking: false, dropped: 0 };
    const wasWorking = this.working;
    const dropped = this.queued;
    this.status = "released";
    this.releasedAt = new Date();
    this.releaseNote = note;
    clearTimeout(this.idleTimer);
    for (const prompt of dropped) this.settle(prompt, "cancelled", `not run: ${note}`);
    if (this.current) {
      this.current.stopReason ??= "release";
      await this.current.process?.stop();
    }
    // Together: a turn whose process is still starting ends only once the process it waits for is stopped.
    await Promise.all([this.draining, this.turns.close()]);
    this.transcript.line(`=== released: ${note} ===`);
    return { wasWorking, dropped: dropped.length };
  }

  /** Runs queued prompts one after another; the gosling is idle once none is left. */
  private startDraining(): void {
    this.status = "running";
    this.activitySince = new Date();
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.status === "released") return;
      if (this.queued.length > 0) return this.startDraining();
      this.status = this.prompts.at(-1)?.state === "completed" ? "completed" : "error";
      this.activitySince = new Date();
      this.scheduleIdleRelease();
    });
  }

  private async drain(): Promise<void> {
    let next: PromptEntry | undefined;
    while (this.status !== "released" && (next = this.queued[0])) await this.runTurn(next);
  }

  private async runTurn(prompt: PromptEntry): Promise<void> {
    if (this.workedMs >= this.host.maxRuntimeMs) return this.refuseForRuntime(prompt);
    prompt.state = "running";
    prompt.startedAt = new Date();
    const current: NonNullable<Gosling["current"]> = (this.current = { prompt, process: undefined });
    this.transcript.line(`>>> [prompt ${prompt.number}] ${prompt.startedAt.toISOString()}`);
    this.transcript.line(prompt.text.replace(/^/gm, ">>> "));
    this.host.turnStarted(this, prompt);
    const stderr: string[] = [];
    const sinks = {
      transcript: this.transcript,
      notice: (text: string) => this.host.notice(this, text),
      stderr: (line: string) => void (stderr.push(line) > STDERR_LINES && stderr.shift()),
    };
    let exit: ProcessExit | undefined;
    let problem: string | undefined;
    let facts: TurnFacts = { complete: false, tokens: undefined, errors: [], events: 0, answer: "" };
    try {
      const started = await this.turns.start(prompt.text, this.resumable, sinks);
      const turn = started.turn;
      current.process = turn;
      // Released while goose was starting: it stops at once.
      if (this.status === "released") current.stopReason = "release";
      const timer = setTimeout(
        () => {
          current.stopReason ??= "runtime";
          void turn.stop();
        },
        timerDelay(this.host.maxRuntimeMs - this.workedMs),
      );
      if (current.stopReason) void turn.stop();
      exit = await turn.done.finally(() => clearTimeout(timer));
      facts = started.reader.finish();
    } catch (error) {
      problem = `goose could not be started: ${errorMessage(error)}`;
    }
    this.workedMs += Date.now() - prompt.startedAt.getTime();
    if (facts.events > 0 || exit?.code === 0) this.resumable = true;
    if (facts.tokens !== undefined && facts.tokens !== null) this.tokens = facts.tokens;
    prompt.tokens = facts.tokens ?? null;
    prompt.answer = facts.answer;
    problem ??= this.problemOf(exit!, facts, current.stopReason);
    const state: PromptState = current.stopReason === "release" ? "cancelled" : problem ? "error" : "completed";
    this.endTurn(prompt, state, problem, stderr, facts.tokens);
    this.current = undefined;
    this.settle(prompt, state, problem);
    this.host.turnEnded(this, prompt);
    if (current.stopReason === "runtime") for (const queued of this.queued) this.refuseForRuntime(queued);
  }

  /** The transcript's record of how a turn ended: goose's stderr and the reason when it failed, then the end line. */
  private endTurn(prompt: PromptEntry, state: PromptState, problem: string | undefined, stderr: string[], tokens: number | null | undefined): void {
    if (problem) {
      if (state === "error") for (const line of stderr) this.transcript.line(`[stderr] ${line}`);
      this.transcript.line(`[error] ${problem}`);
    }
    const took = formatDuration(Date.now() - prompt.startedAt!.getTime());
    this.transcript.line(`<<< [prompt ${prompt.number}] ${state} after ${took}${tokens != null ? ` · ${tokens} tokens` : ""}`);
  }

  private problemOf(exit: ProcessExit, facts: TurnFacts, stopReason: "release" | "runtime" | undefined): string | undefined {
    if (stopReason === "release") return `stopped: ${this.releaseNote ?? "released"}`;
    if (stopReason === "runtime") return `stopped after ${formatDuration(this.workedMs)} of work: the gosling reached max_runtime_minutes`;
    if (exit.signal) return `goose was killed by ${exit.signal}`;
    if (exit.code !== 0) return `goose exited with code ${exit.code}`;
    if (facts.errors.length > 0) return `Goose reported an error: ${facts.errors.at(-1)}`;
    if (!facts.complete) return "goose exited without its stream-json complete event";
    return undefined;
  }

  private refuseForRuntime(prompt: PromptEntry): void {
    const note = `not run: the gosling has used its max_runtime_minutes (worked ${formatDuration(this.workedMs)})`;
    this.transcript.line(`[error] prompt ${prompt.number} ${note}`);
    this.settle(prompt, "error", note);
  }

  private settle(prompt: PromptEntry, state: PromptState, problem: string | undefined): void {
    prompt.state = state;
    prompt.endedAt = new Date();
    if (problem) prompt.problem = problem;
    this.settled.get(prompt.number)?.();
    this.settled.delete(prompt.number);
  }

  private scheduleIdleRelease(): void {
    if (this.host.idleReleaseMs <= 0) return;
    this.idleTimer = setTimeout(() => {
      const minutes = this.host.idleReleaseMs / 60_000;
      void this.host.release(this, `idle for ${formatDuration(this.host.idleReleaseMs)} (idle_release_minutes = ${minutes})`);
    }, timerDelay(this.host.idleReleaseMs));
    // An idle gosling has no process; its timer must not keep gaggle running.
    this.idleTimer.unref();
  }
}
