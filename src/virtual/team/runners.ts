// Owns what a team needs of a member's running agent, a gosling or an ACP agent session, so that the roster and the
// courier never ask which of the two they hold.
import type { AgentsChild } from "../agents/agents-child.js";
import type { AgentSession } from "../agents/session.js";
import type { Turn } from "../agents/turn.js";
import type { GooseChild } from "../goose/goose-child.js";
import type { Gosling, PromptEntry } from "../goose/gosling.js";

/** One turn of a member: a gosling's prompt or an agent session's turn, the same object for as long as it lives. */
export interface MemberTurn {
  readonly state: string;
  /** Why it failed or did not run. */
  readonly problem?: string | undefined;
}

/** A member's running agent. */
export interface MemberRunner {
  readonly kind: "gosling" | "agent";
  /** The gosling's id, or the agent session's (what get_gosling_output or get_agent_output takes). */
  readonly id: string;
  /** Its conversation, which a later runner of the member continues: a Goose session name, or an ACP session id once made. */
  readonly conversation: string | undefined;
  /** Not released (nor failed, for an agent session): it takes prompts. */
  readonly live: boolean;
  /** A turn runs or waits. */
  readonly working: boolean;
  /** Its token count as last reported, where the agent reports one. */
  readonly tokens: number | null;
  /** When it last turned working or idle. */
  readonly activitySince: Date;
  /** Queues a prompt; it runs at once when no turn runs. Throws when a limit refuses it. */
  send(text: string): MemberTurn;
  /** Whether `turn` is one of its own. */
  holds(turn: MemberTurn): boolean;
  /** Whether the agent was given the turn's prompt: one that failed before (its agent never started) never was. */
  reached(turn: MemberTurn): boolean;
  /**
   * Why `turn`, one of its own that has ended, failed: its agent could not be started, died during it, answered it
   * with an error, stopped it unfinished (an ACP stop reason such as refusal), or ran past its time limit.
   * Undefined when it finished, and when it was cancelled (released: the member removed, or gaggle closing).
   */
  failure(turn: MemberTurn): string | undefined;
  release(note: string): Promise<{ wasWorking: boolean }>;
}

/** What follows every member's turns: the courier. */
export interface MemberEvents {
  turnStarted(runner: MemberRunner, turn: MemberTurn): void;
  turnEnded(runner: MemberRunner, turn: MemberTurn): void;
  released(runner: MemberRunner): void;
  /** A notice the agent printed during a turn (Goose's compaction notices). */
  notice(runner: MemberRunner, text: string): void;
}

export class GoslingRunner implements MemberRunner {
  readonly kind = "gosling";

  constructor(
    private readonly goose: GooseChild,
    readonly gosling: Gosling,
  ) {}

  get id(): string {
    return this.gosling.id;
  }
  get conversation(): string {
    return this.gosling.conversation;
  }
  get live(): boolean {
    return this.gosling.status !== "released";
  }
  get working(): boolean {
    return this.gosling.working;
  }
  get tokens(): number | null {
    return this.gosling.tokens;
  }
  get activitySince(): Date {
    return this.gosling.activitySince;
  }

  send(text: string): PromptEntry {
    return this.goose.send(this.gosling.id, text, {}).entry;
  }

  holds(turn: MemberTurn): boolean {
    return this.gosling.prompts.some((entry) => entry === turn);
  }

  reached(turn: MemberTurn): boolean {
    const entry = this.gosling.prompts.find((candidate) => candidate === turn);
    return entry !== undefined && !entry.problem?.startsWith("goose could not be started");
  }

  failure(turn: MemberTurn): string | undefined {
    const entry = this.gosling.prompts.find((candidate) => candidate === turn);
    return entry?.state === "error" ? (entry.problem ?? "goose ended the turn with an error") : undefined;
  }

  release(note: string): Promise<{ wasWorking: boolean }> {
    return this.goose.release(this.gosling, note);
  }
}

export class AgentRunner implements MemberRunner {
  readonly kind = "agent";

  constructor(
    private readonly agents: AgentsChild,
    readonly session: AgentSession,
  ) {}

  get id(): string {
    return this.session.id;
  }
  get conversation(): string | undefined {
    return this.session.acpSessionId;
  }
  get live(): boolean {
    return this.session.live;
  }
  get working(): boolean {
    return this.session.current !== undefined || this.session.queued.length > 0;
  }
  get tokens(): null {
    return null;
  }
  get activitySince(): Date {
    return this.session.lastActivity;
  }

  send(text: string): Turn {
    return this.session.send(text, { clientSession: undefined, ask: undefined });
  }

  holds(turn: MemberTurn): boolean {
    return this.session.turns.some((candidate) => candidate === turn);
  }

  reached(turn: MemberTurn): boolean {
    return this.session.turns.find((candidate) => candidate === turn)?.reached === true;
  }

  failure(turn: MemberTurn): string | undefined {
    const own = this.session.turns.find((candidate) => candidate === turn);
    if (own?.state === "failed") return own.problem ?? "the turn failed";
    // Cancelled by gaggle at prompt_timeout_minutes, not by anyone who asked for it.
    if (own?.state === "cancelled" && own.timedOut !== undefined) return own.timedOut;
    // Completed, yet the agent stopped before it finished (refusal, max_tokens, max_turn_requests).
    if (own?.state === "completed" && own.stopReason !== undefined && own.stopReason !== "end_turn")
      return own.problem ?? `stop reason: ${own.stopReason}`;
    return undefined;
  }

  release(note: string): Promise<{ wasWorking: boolean }> {
    return this.agents.release(this.session, note);
  }
}
