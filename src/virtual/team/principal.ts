// Owns who a call speaks for: the client lead, or the member whose credential opened the session; and what each may do.
import { LOCAL_PRINCIPAL, type CallContext } from "../../children/child.js";
import { GaggleError } from "../../shared/errors.js";
import { LEAD, type TeamRecord } from "./records.js";
import type { TeamRegistry } from "./registry.js";

/** Who a team call speaks for: an agent id (LEAD for a client), and the principal whose teams it reaches. */
export interface TeamCaller {
  agentId: string;
  /** The client's principal; a member's is the owner of the team it is in. */
  owner: string;
}

/** A member acts for the principal whose team it is in: it reaches that principal's teams, and what it creates is theirs. */
export function teamCaller(ctx: CallContext, registry: TeamRegistry): TeamCaller {
  const agentId = callerAgentId(ctx, registry);
  const home = agentId === LEAD ? undefined : registry.agent(agentId);
  return { agentId, owner: home?.team.owner ?? ctx.caller?.principal ?? LOCAL_PRINCIPAL };
}

/** A team only its owner's clients and members reach; to anyone else it is not there (and its id cannot be used). */
export function reachable(team: TeamRecord | undefined, caller: TeamCaller): team is TeamRecord {
  return team !== undefined && team.owner === caller.owner;
}

/**
 * Refuses a team id another principal's team holds, without saying so: team ids are shared by every principal, and
 * naming the holder would tell the caller that someone else has a team by that id.
 */
export function requireFree(team: TeamRecord | undefined, caller: TeamCaller, teamId: string): void {
  if (team === undefined || reachable(team, caller)) return;
  throw new GaggleError("PERMISSION_DENIED", `the team id ${JSON.stringify(teamId)} cannot be used here`, {
    hint: "pick another team_id; gg_team_status shows your own teams",
  });
}

/**
 * A session opened on a member URL speaks as that member and nothing in the arguments can change it; any
 * other session (the stdio client, an HTTP client holding a bearer token) is the operator: LEAD of its own teams.
 * A member credential whose member was removed speaks for no one.
 */
export function callerAgentId(ctx: CallContext, registry: TeamRegistry): string {
  const identity = ctx.caller?.identity;
  if (!identity) return LEAD;
  const found = registry.agent(identity.agentId);
  if (!found || found.team.team_id !== identity.teamId) {
    throw new GaggleError("PERMISSION_DENIED", `this session's member credential (${identity.agentId} of team ${identity.teamId}) names no member`);
  }
  if (found.member.removed_at) {
    throw new GaggleError(
      "PERMISSION_DENIED",
      `${identity.agentId} was removed from team ${identity.teamId} at ${found.member.removed_at} and may no longer use team tools`,
    );
  }
  return identity.agentId;
}

/** The lead, or a member not removed. */
export function isParticipant(team: TeamRecord, agentId: string): boolean {
  return agentId === team.lead_agent_id || team.members.some((member) => member.agent_id === agentId && !member.removed_at);
}

export function requireParticipant(team: TeamRecord, agentId: string): void {
  if (isParticipant(team, agentId)) return;
  throw new GaggleError("PERMISSION_DENIED", `${agentId} is not a member of team ${team.team_id}`, {
    hint: agentId === LEAD ? `team ${team.team_id} is led by ${team.lead_agent_id}, one of gaggle's agents` : "a member speaks only in its own teams",
  });
}

/** Only the lead adds and removes members, unless [virtual.team] allow_member_manage = true. */
export function requireManager(
  team: TeamRecord,
  agentId: string,
  allowMemberManage: boolean,
  action: "add members to" | "remove members from",
): void {
  requireParticipant(team, agentId);
  if (agentId === team.lead_agent_id || allowMemberManage) return;
  throw new GaggleError(
    "PERMISSION_DENIED",
    `${agentId} is not allowed to ${action} team ${team.team_id}: only its lead (${team.lead_agent_id}) manages it`,
    {
      hint: "ask the lead with gg_team_message, or set [virtual.team] allow_member_manage = true",
    },
  );
}
