// Owns the shape of what the team child keeps on disk: teams, their members, messages and deliveries.

/** The agent id of a team's lead when the lead is an MCP client (not one of gaggle's own agents). */
export const LEAD = "lead";
/** The sender of notices gaggle itself sends (compaction, a member's failed turn). */
export const SYSTEM = "gaggle";
/** `recipient_agent_id` meaning everyone in the team but the sender. */
export const BROADCAST = "broadcast";
/** Team ids name files and URIs: kept plain. */
export const TEAM_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export type DeliveryState = "pending" | "deferred" | "delivered" | "failed";
export type MessageKind = "message" | "onboarding" | "compaction" | "turn_failed";
export type MessageScope = "direct" | "broadcast";

export interface WorktreeRecord {
  name: string;
  /** Absolute. */
  path: string;
  branch: string;
  /** True when gaggle created it for this member; false for `use_existing_worktree`. */
  created: boolean;
}

export interface MemberRecord {
  agent_id: string;
  title: string;
  /** The agent id that added it (LEAD, or a member's). */
  added_by: string;
  added_at: string;
  removed_at: string | null;
  /** The `[agents.NAME]` it runs as over ACP; null for a gosling. */
  agent: string | null;
  /** Where it runs: the worktree, else the goose child's cwd (a gosling) or its agent's first root (an ACP agent). */
  cwd: string;
  worktree: WorktreeRecord | null;
  model_preset: string | null;
  /** goose run flags from the preset (--provider, --model), fixed when the member was added. */
  options: string[];
  /** Its conversation, once the first runner made it: the Goose session its goslings live in, or its ACP session id. */
  session: string | null;
  /** Its current (or last) gosling. */
  gosling_id: string | null;
  /** Its current (or last) agent session (of the agents child), for an ACP member. */
  agent_session_id: string | null;
  /** Whether the member that added it hears when its context is compacted. */
  compaction_notices: boolean;
  /** Goose's token count for its session, as last reported. */
  tokens: number | null;
  last_activity_at: string;
}

/** What a turn_failed notice is about: the member, the message its failed turn carried, and why it failed. */
export interface TurnFailureRecord {
  agent_id: string;
  title: string;
  /** The message the failed turn carried, and its delivery to the member. */
  message_id: string;
  delivery_id: string;
  /** The gosling or agent session whose turn it was (get_gosling_output or get_agent_output shows its transcript). */
  gosling_id: string | null;
  agent_session_id: string | null;
  /** The turn's state as its runner names it ("failed", "error", "completed" with a stop reason). */
  state: string;
  /** Why: the process's exit code and stderr, the agent's error message, its stop reason. */
  problem: string;
}

export interface MessageRecord {
  message_id: string;
  kind: MessageKind;
  from: string;
  /** An agent id, or BROADCAST. */
  to: string;
  scope: MessageScope;
  text: string;
  /** Absolute, checked to be images when the message was sent. */
  image_paths: string[];
  at: string;
  /** Set on a turn_failed notice only. */
  failure?: TurnFailureRecord;
}

export interface DeliveryRecord {
  delivery_id: string;
  message_id: string;
  to: string;
  state: DeliveryState;
  /** Why it is deferred, or why it failed. */
  reason: string | null;
  created_at: string;
  delivered_at: string | null;
  /** Deliveries to an inbox (the lead's) are unread until gg_team_status returns them. */
  read_at: string | null;
  /** The gosling whose turn carried it. */
  gosling_id: string | null;
  /** The agent session whose turn carried it (an ACP member). */
  agent_session_id: string | null;
}

export interface TeamRecord {
  team_id: string;
  /** The principal whose client created it: only its clients (and the team's members) reach the team. */
  owner: string;
  lead_agent_id: string;
  created_at: string;
  members: MemberRecord[];
  messages: MessageRecord[];
  deliveries: DeliveryRecord[];
}

/** How a team is told apart from every other: its id is its owner's own, so the owner is part of its key. */
export function teamKey(owner: string, teamId: string): string {
  return `${owner}\u0000${teamId}`;
}

export function now(): string {
  return new Date().toISOString();
}

export function outstanding(delivery: DeliveryRecord): boolean {
  return delivery.state === "pending" || delivery.state === "deferred";
}
