// Owns the teams in memory: finding a team or an agent, creating and dropping teams, new ids, saving.
import { randomBytes } from "node:crypto";
import { GaggleError } from "../../shared/errors.js";
import { LEAD, now, outstanding, teamKey, type DeliveryRecord, type MemberRecord, type TeamRecord } from "./records.js";
import type { TeamStore } from "./store.js";

/**
 * Team ids are each principal's own: two principals' teams of one id are two teams, kept by (owner, team id), and
 * neither principal learns of the other's. Agent ids are unique over every principal's teams, so a member's
 * credential (its team id and agent id) names one member of one team.
 */
export class TeamRegistry {
  private readonly teams = new Map<string, TeamRecord>();
  /** Teams made by an add whose member has not started yet: never saved, and dropped once no add is left to start one. */
  private readonly unstarted = new Set<TeamRecord>();

  constructor(private readonly store: TeamStore) {
    for (const team of store.load()) this.teams.set(teamKey(team.owner, team.team_id), team);
  }

  all(): TeamRecord[] {
    return [...this.teams.values()];
  }

  /** `owner`'s team of this id. */
  find(owner: string, teamId: string): TeamRecord | undefined {
    return this.teams.get(teamKey(owner, teamId));
  }

  /** The teams `owner`'s clients reach. */
  ownedBy(owner: string): TeamRecord[] {
    return this.all().filter((team) => team.owner === owner);
  }

  /** A team `owner` reaches; another principal's is not there for it. */
  get(teamId: string, owner: string): TeamRecord {
    const team = this.find(owner, teamId);
    if (team) return team;
    const known = this.ownedBy(owner).map((each) => each.team_id);
    throw new GaggleError("NOT_FOUND", `no team "${teamId}"`, {
      hint: known.length > 0 ? `known teams: ${known.join(", ")}` : "gg_team_manage with a new team_id creates a team, its caller the lead",
    });
  }

  /** Created in memory only: it is saved once its first member has started (`started`). */
  create(teamId: string, leadAgentId: string, owner: string): TeamRecord {
    const team: TeamRecord = { team_id: teamId, owner, lead_agent_id: leadAgentId, created_at: now(), members: [], messages: [], deliveries: [] };
    this.teams.set(teamKey(owner, teamId), team);
    this.unstarted.add(team);
    return team;
  }

  /**
   * After a failed add: a team no member of has started goes once it has no members left, whichever of the adds to it
   * created it; while another add to it is still starting its member, the team stays. True if it went.
   */
  drop(team: TeamRecord): boolean {
    if (!this.unstarted.has(team) || team.members.length > 0) return false;
    this.unstarted.delete(team);
    return this.find(team.owner, team.team_id) === team && this.teams.delete(teamKey(team.owner, team.team_id));
  }

  /** A member of the team started: the team is saved; true if it is the team's first, which makes the team. */
  started(team: TeamRecord): boolean {
    const first = this.unstarted.delete(team);
    void this.save(team);
    return first;
  }

  /**
   * Saves a team whose first member has started; one whose first member is still starting stays in memory only.
   * Resolves once it is on disk; a failure is logged, and rejects.
   */
  save(team: TeamRecord): Promise<void> {
    if (!this.unstarted.has(team) && this.find(team.owner, team.team_id) === team) return this.store.save(team);
    return Promise.resolve();
  }

  /** Resolves once `team`'s newest save is on disk; rejects with its failure, for a tool to answer with. */
  saved(team: TeamRecord): Promise<void> {
    return this.store.saved(team);
  }

  /** Resolves once the saves asked for so far (of `team`, or of every team) have ended. */
  settled(team?: TeamRecord): Promise<void> {
    return this.store.settled(team);
  }

  /** The member an agent id names, in the team that added it (agent ids are unique across teams). */
  agent(agentId: string): { team: TeamRecord; member: MemberRecord } | undefined {
    for (const team of this.teams.values()) {
      const member = team.members.find((candidate) => candidate.agent_id === agentId);
      if (member) return { team, member };
    }
    return undefined;
  }

  /** How a sender is named in messages: a member's title, "team lead" for the client lead, "gaggle" for notices. */
  titleOf(agentId: string): string {
    if (agentId === LEAD) return "team lead";
    return this.agent(agentId)?.member.title ?? agentId;
  }

  newAgentId(): string {
    for (;;) {
      const id = `agent-${randomBytes(4).toString("hex")}`;
      if (!this.agent(id)) return id;
    }
  }

  /** Deliveries to one agent still waiting, over every team, oldest first. */
  waitingFor(agentId: string): Array<{ team: TeamRecord; delivery: DeliveryRecord }> {
    return this.all()
      .flatMap((team) => team.deliveries.filter((d) => d.to === agentId && outstanding(d)).map((delivery) => ({ team, delivery })))
      .sort((a, b) => a.delivery.created_at.localeCompare(b.delivery.created_at));
  }

  /** Agents with deliveries still waiting, in any team. */
  agentsWaiting(): string[] {
    const agents = new Set<string>();
    for (const team of this.all()) for (const d of team.deliveries) if (outstanding(d)) agents.add(d.to);
    agents.delete(LEAD);
    return [...agents];
  }
}

export function newId(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}
