// One prompt of an agent session: queued, then run as the session's one turn at a time, then ended.
import type * as acp from "@agentclientprotocol/sdk";
import type { Ask } from "./permissions.js";

export type TurnState = "queued" | "running" | "completed" | "cancelled" | "failed" | "dropped";

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

  end(state: TurnState, problem?: string): void {
    if (this.endedAt) return;
    this.state = state;
    this.problem = problem;
    this.endedAt = new Date();
    this.abort.abort();
    this.resolveDone();
  }
}
