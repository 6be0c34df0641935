// The lead's inbox remembers the sessions that lead each team only while both are there: sessions that come and go,
// and teams that go, leave nothing behind, and notices reach only the sessions still there.
import { describe, expect, it } from "vitest";
import type { CallContext, Caller, LogMessage } from "../../../src/children/child.js";
import { Switchboard } from "../../../src/children/switchboard.js";
import { LeadInbox } from "../../../src/virtual/team/inbox.js";
import { LEAD, now, type DeliveryRecord, type MessageRecord, type TeamRecord } from "../../../src/virtual/team/records.js";

function teamOf(owner: string, teamId: string): TeamRecord {
  return { team_id: teamId, owner, lead_agent_id: LEAD, created_at: now(), members: [], messages: [], deliveries: [] };
}

function callFrom(sessionId: string, principal: string): CallContext {
  const caller: Caller = {
    sessionId,
    principal,
    forward: () => Promise.reject(new Error("this client is asked nothing")),
    log: () => {},
  };
  return { caller };
}

/** A real switchboard whose notices to sessions are recorded: the session ids each notice went to. */
function listening(): { switchboard: Switchboard; notified: string[] } {
  const switchboard = new Switchboard();
  const notified: string[] = [];
  switchboard.listen({
    listChanged: () => {},
    resourceUpdated: () => {},
    log: () => {},
    notify: (sessionId: string, _note: { log?: LogMessage; resourceUpdated?: string }) => notified.push(sessionId),
  });
  return { switchboard, notified };
}

function messageTo(team: TeamRecord): { message: MessageRecord; delivery: DeliveryRecord } {
  const at = now();
  const message: MessageRecord = {
    message_id: "msg-1",
    kind: "message",
    from: "agent-1",
    to: LEAD,
    scope: "direct",
    text: "done",
    image_paths: [],
    at,
  };
  const delivery: DeliveryRecord = {
    delivery_id: "dlv-1",
    message_id: message.message_id,
    to: LEAD,
    state: "pending",
    reason: null,
    created_at: at,
    delivered_at: null,
    read_at: null,
    gosling_id: null,
    agent_session_id: null,
  };
  team.messages.push(message);
  team.deliveries.push(delivery);
  return { message, delivery };
}

describe("the lead's inbox sessions", () => {
  it("do not grow with sessions that come and go: a team whose sessions have all gone leaves the map", () => {
    const { switchboard } = listening();
    const inbox = new LeadInbox("team", switchboard, () => "member");
    const teams = [teamOf("ann", "t1"), teamOf("ann", "t2"), teamOf("bob", "t1")];
    for (let round = 0; round < 50; round++) {
      const sessions = teams.map((team, i) => {
        const sessionId = `session-${round}-${i}`;
        inbox.noteCaller(team, LEAD, callFrom(sessionId, team.owner));
        return sessionId;
      });
      expect(inbox.remembered()).toEqual({ teams: 3, sessions: 3 });
      for (const sessionId of sessions) inbox.forgetSession(sessionId);
      expect(inbox.remembered()).toEqual({ teams: 0, sessions: 0 });
    }
  });

  it("keep a session that is still there, and notices reach only it", () => {
    const { switchboard, notified } = listening();
    const inbox = new LeadInbox("team", switchboard, () => "member");
    const team = teamOf("ann", "t1");
    inbox.noteCaller(team, LEAD, callFrom("stays", "ann"));
    for (let i = 0; i < 20; i++) {
      inbox.noteCaller(team, LEAD, callFrom(`passing-${i}`, "ann"));
      inbox.forgetSession(`passing-${i}`);
    }
    expect(inbox.remembered()).toEqual({ teams: 1, sessions: 1 });
    const { message, delivery } = messageTo(team);
    inbox.deliver(team, message, delivery);
    expect(notified).toEqual(["stays"]);
  });

  it("forget a team that is gone, and only that team", () => {
    const { switchboard, notified } = listening();
    const inbox = new LeadInbox("team", switchboard, () => "member");
    const gone = teamOf("ann", "t1");
    const kept = teamOf("bob", "t1");
    inbox.noteCaller(gone, LEAD, callFrom("ann-session", "ann"));
    inbox.noteCaller(kept, LEAD, callFrom("bob-session", "bob"));
    inbox.forgetTeam(gone);
    expect(inbox.remembered()).toEqual({ teams: 1, sessions: 1 });
    const first = messageTo(gone);
    inbox.deliver(gone, first.message, first.delivery);
    expect(notified).toEqual([]);
    const second = messageTo(kept);
    inbox.deliver(kept, second.message, second.delivery);
    expect(notified).toEqual(["bob-session"]);
  });
});
