// One prompt of an agent session: queued, then run as the session's one turn at a time, then ended.
import type * as acp from "@agentclientprotocol/sdk";
import { errorMessage } from "../../shared/errors.js";
import type { Ask } from "./permissions.js";

export type TurnState = "queued" | "running" | "completed" | "cancelled" | "failed" | "dropped";
/** How a turn ended, before it is ended with it. */
export interface TurnOutcome {
  state: TurnState;
  problem?: string;
}

/** Where a prompt came from: the client session told when its turn ends, and who is asked for permissions meanwhile. */
export interface PromptSource {
  clientSession: string | undefined;
  ask: Ask | undefined;
}

export class Turn {
  state: TurnState = "queued";
  stopReason: acp.StopReason | undefined;
  problem: string | undefined;
  answer = "";
  /** The agent was given the prompt: a turn that failed before (its process or session did not start) never reached it. */
  reached = false;
  /** Set when gaggle cancelled the turn for running past prompt_timeout_minutes: the limit it ran past. */
  timedOut: string | undefined;
  readonly queuedAt = new Date();
  startedAt: Date | undefined;
  endedAt: Date | undefined;
  /** Aborted when the turn is cancelled or ends: permission questions still open are withdrawn. */
  readonly abort = new AbortController();
  readonly done: Promise<void>;
  private resolveDone!: () => void;

  constructor(
    readonly number: number,
    readonly text: string,
    readonly source: PromptSource,
  ) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  /** The agent is given the turn's prompt now. */
  begin(): void {
    this.state = "running";
    this.startedAt = new Date();
  }

  /**
   * How the turn ended, the agent having answered its prompt with `stopReason`. One cut at its time limit says so:
   * the agent's stop reason says only that it was cancelled.
   */
  answered(stopReason: acp.StopReason): TurnOutcome {
    this.stopReason = stopReason;
    const state = stopReason === "cancelled" ? "cancelled" : "completed";
    return stopReason === "end_turn" ? { state } : { state, problem: this.timedOut ?? `stop reason: ${stopReason}` };
  }

  /** How the turn ended, its prompt having failed with `error`: cancelled if it was, else failed. */
  failedWith(error: unknown): TurnOutcome {
    return { state: this.abort.signal.aborted ? "cancelled" : "failed", problem: this.timedOut ?? errorMessage(error) };
  }

  end(state: TurnState, problem?: string): void {
    if (this.endedAt) return;
    this.state = state;
    this.problem = problem;
    this.endedAt = new Date();
    this.abort.abort();
    this.resolveDone();
  }
}
