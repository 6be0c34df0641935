// Owns what gg_team_status answers: the team, each member's state and activity, deliveries, the caller's unread.
import { oneLine } from "../goose/format.js";
import type { InboxEntry } from "./inbox.js";
import { now, outstanding, type MemberRecord, type MessageRecord, type TeamRecord } from "./records.js";
import type { Roster } from "./roster.js";

/** Finished deliveries shown besides every one still waiting. */
const RECENT_DELIVERIES = 30;

export function statusView(team: TeamRecord, caller: string, roster: Roster, unread: InboxEntry[]): Record<string, unknown> {
  return {
    team_id: team.team_id,
    lead_agent_id: team.lead_agent_id,
    caller_agent_id: caller,
    generated_at: now(),
    members: team.members.map((member) => memberRow(team, member, roster)),
    deliveries: deliveryRows(team),
    unread_count: unread.length,
    unread_messages: unread,
  };
}

function memberRow(team: TeamRecord, member: MemberRecord, roster: Roster): Record<string, unknown> {
  const runner = roster.runner(member.agent_id);
  const last = lastMessage(team, member.agent_id);
  const activity = [member.last_activity_at, runner?.activitySince.toISOString(), last?.at]
    .filter((at): at is string => at !== undefined)
    .sort()
    .at(-1);
  return {
    agent_id: member.agent_id,
    title: member.title,
    state: roster.state(member),
    added_by: member.added_by,
    added_at: member.added_at,
    removed_at: member.removed_at,
    last_activity_at: activity ?? member.added_at,
    last_message: last
      ? { message_id: last.message_id, kind: last.kind, from: last.from, to: last.to, at: last.at, excerpt: oneLine(last.text, 160) }
      : null,
    worktree_path: member.worktree?.path ?? null,
    worktree_name: member.worktree?.name ?? null,
    branch: member.worktree?.branch ?? null,
    cwd: member.cwd,
    agent: member.agent,
    gosling_id: member.gosling_id,
    agent_session_id: member.agent_session_id,
    session: runner?.conversation ?? member.session,
    tokens: runner?.tokens ?? member.tokens,
    model_preset: member.model_preset,
    compaction_notices: member.compaction_notices,
    waiting_deliveries: team.deliveries.filter((delivery) => delivery.to === member.agent_id && outstanding(delivery)).length,
  };
}

/** The latest message the member sent, or that was delivered to it. */
function lastMessage(team: TeamRecord, agentId: string): MessageRecord | undefined {
  const received = new Set(team.deliveries.filter((d) => d.to === agentId && d.state === "delivered").map((d) => d.message_id));
  for (let i = team.messages.length - 1; i >= 0; i--) {
    const message = team.messages[i]!;
    if (message.from === agentId || received.has(message.message_id)) return message;
  }
  return undefined;
}

function deliveryRows(team: TeamRecord): Array<Record<string, unknown>> {
  const messages = new Map(team.messages.map((message) => [message.message_id, message]));
  const finished = team.deliveries.filter((delivery) => !outstanding(delivery)).slice(-RECENT_DELIVERIES);
  const shown = new Set([...finished, ...team.deliveries.filter(outstanding)]);
  return team.deliveries
    .filter((delivery) => shown.has(delivery))
    .map((delivery) => {
      const message = messages.get(delivery.message_id);
      return {
        delivery_id: delivery.delivery_id,
        message_id: delivery.message_id,
        kind: message?.kind ?? null,
        from: message?.from ?? null,
        to: delivery.to,
        state: delivery.state,
        reason: delivery.reason,
        created_at: delivery.created_at,
        delivered_at: delivery.delivered_at,
        read_at: delivery.read_at,
        gosling_id: delivery.gosling_id,
        agent_session_id: delivery.agent_session_id,
      };
    });
}
