// Owns the client lead's inbox: messages to "lead" land there at once, its sessions are notified, and reads mark them.
import type { CallContext } from "../../children/child.js";
import type { ChildEvents } from "../../children/switchboard.js";
import { excerpt } from "../goose/format.js";
import { LEAD, now, teamKey, type DeliveryRecord, type MessageRecord, type TeamRecord, type TurnFailureRecord } from "./records.js";

export function inboxUri(teamId: string): string {
  return `team://${teamId}/inbox`;
}

/** One message as its recipient reads it. */
export interface InboxEntry {
  message_id: string;
  delivery_id: string;
  kind: MessageRecord["kind"];
  from: string;
  from_title: string;
  scope: MessageRecord["scope"];
  at: string;
  message: string;
  image_paths: string[];
  delivery_state: DeliveryRecord["state"];
  read_at: string | null;
  /** On a turn_failed notice: which member's turn, on which message, and why. */
  failure?: TurnFailureRecord;
}

export class LeadInbox {
  /**
   * The client sessions that have acted as lead of each team (by teamKey: one id is each owner's own); notices go to
   * them. Session ids mean nothing after a restart. A team is here only while it has a session that has not gone,
   * and never after it is gone itself, so the map holds no more than the teams with clients leading them.
   */
  private readonly sessions = new Map<string, Set<string>>();

  constructor(
    private readonly childName: string,
    private readonly events: ChildEvents,
    private readonly titleOf: (agentId: string) => string,
  ) {}

  /**
   * Remembers the session of a call by the lead of a team gaggle's own client leads: the most recent such
   * sessions are told of new messages. Any other caller is ignored.
   */
  noteCaller(team: TeamRecord, callerId: string, ctx: CallContext): void {
    if (callerId === LEAD && team.lead_agent_id === LEAD && ctx.caller) this.noteSession(teamKey(team.owner, team.team_id), ctx.caller.sessionId);
  }

  private noteSession(key: string, sessionId: string): void {
    const sessions = this.sessions.get(key) ?? new Set<string>();
    sessions.delete(sessionId);
    sessions.add(sessionId);
    if (sessions.size > 8) sessions.delete(sessions.values().next().value!);
    this.sessions.set(key, sessions);
  }

  /** A client session went away: it is told nothing more, and a team left with no session goes from the map. */
  forgetSession(sessionId: string): void {
    for (const [key, sessions] of this.sessions) {
      sessions.delete(sessionId);
      if (sessions.size === 0) this.sessions.delete(key);
    }
  }

  /** A team that is gone: none of its sessions is told of it again. */
  forgetTeam(team: TeamRecord): void {
    this.sessions.delete(teamKey(team.owner, team.team_id));
  }

  /** How many teams have sessions remembered, and how many sessions that makes; for tests of what the map keeps. */
  remembered(): { teams: number; sessions: number } {
    let sessions = 0;
    for (const each of this.sessions.values()) sessions += each.size;
    return { teams: this.sessions.size, sessions };
  }

  /**
   * The delivery is done once the message is in the inbox; it stays unread until gg_team_status returns it. Only the
   * owner's clients hear of it: the inbox URI names each principal's own team of that id.
   */
  deliver(team: TeamRecord, message: MessageRecord, delivery: DeliveryRecord): void {
    delivery.state = "delivered";
    delivery.delivered_at = now();
    const uri = inboxUri(team.team_id);
    const title = this.titleOf(message.from);
    const data = {
      message: `Message from ${message.from} (${title}) in team ${team.team_id}: ${excerpt(message.text, 200)}`,
      team_id: team.team_id,
      message_id: message.message_id,
      delivery_id: delivery.delivery_id,
      kind: message.kind,
      from: message.from,
      from_title: title,
      scope: message.scope,
      text: message.text,
      image_paths: message.image_paths,
      inbox: uri,
      ...(message.failure && { failure: message.failure }),
    };
    const level = message.kind === "turn_failed" ? "warning" : "info";
    for (const sessionId of this.sessions.get(teamKey(team.owner, team.team_id)) ?? []) {
      this.events.notify(sessionId, { log: { level, logger: this.childName, data }, resourceUpdated: uri });
    }
    this.events.resourceUpdated(this.childName, uri, (principal) => principal === team.owner);
  }

  /**
   * Messages to `agentId` in this team, oldest first. The client lead's are those in its inbox (`unreadOnly`:
   * not shown yet); a member's are every delivery to it, whatever its state, since they arrive as turns.
   */
  entries(team: TeamRecord, agentId: string, unreadOnly = false): InboxEntry[] {
    const messages = new Map(team.messages.map((message) => [message.message_id, message]));
    const mine = (delivery: DeliveryRecord) =>
      delivery.to === agentId && (agentId !== LEAD || (delivery.state === "delivered" && (!unreadOnly || delivery.read_at === null)));
    return team.deliveries.filter(mine).flatMap((delivery) => {
      const message = messages.get(delivery.message_id);
      if (!message) return [];
      return [
        {
          message_id: message.message_id,
          delivery_id: delivery.delivery_id,
          kind: message.kind,
          from: message.from,
          from_title: this.titleOf(message.from),
          scope: message.scope,
          at: message.at,
          message: message.text,
          image_paths: message.image_paths,
          delivery_state: delivery.state,
          read_at: delivery.read_at,
          ...(message.failure && { failure: message.failure }),
        },
      ];
    });
  }

  /** Returns the client lead's unread messages and marks them read; the caller saves the team. */
  takeUnread(team: TeamRecord): InboxEntry[] {
    const unread = this.entries(team, LEAD, true);
    const at = now();
    const ids = new Set(unread.map((entry) => entry.delivery_id));
    for (const delivery of team.deliveries) if (ids.has(delivery.delivery_id)) delivery.read_at = at;
    return unread;
  }
}
