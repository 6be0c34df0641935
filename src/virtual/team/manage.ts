// Owns gg_team_manage: adding a member (team, worktree, gosling, onboarding) with rollback, and removing members.
import type { CallContext } from "../../children/child.js";
import { errorMessage } from "../../shared/errors.js";
import type { Courier } from "./courier.js";
import { checkImages, type ImagePlace } from "./images.js";
import type { LeadInbox } from "./inbox.js";
import { onboardingTurn } from "./prompts.js";
import { requireManager, requireParticipant, type TeamCaller } from "./principal.js";
import { now, type MemberRecord, type TeamRecord } from "./records.js";
import type { TeamRegistry } from "./registry.js";
import type { Roster } from "./roster.js";
import type { TeamSettings } from "../../config/virtual/team.js";
import { resolvePreset, type AddRequest, type RemoveRequest } from "./validate.js";
import type { CreatedWorktree, Worktrees } from "./worktrees.js";

export interface ManageDeps {
  registry: TeamRegistry;
  roster: Roster;
  courier: Courier;
  /** The team's folder: [virtual.goose] cwd, where goslings run and worktrees are made from. */
  home: string;
  worktrees: Worktrees;
  /** The client lead's inbox, which forgets a team whose first add failed. */
  inbox: LeadInbox;
  settings: TeamSettings;
  /** The team child's resources changed (a new team's inbox). */
  teamsChanged(): void;
}

/** Where a sender's relative paths start: its own working directory. */
export function cwdOf(agentId: string, deps: Pick<ManageDeps, "registry" | "home">): string {
  return deps.registry.agent(agentId)?.member.cwd ?? deps.home;
}

/** Where a sender's images may come from: its working directory and the team's folder. */
export function imagePlaceOf(agentId: string, deps: Pick<ManageDeps, "registry" | "home">): ImagePlace {
  const cwd = cwdOf(agentId, deps);
  return { cwd, roots: [cwd, deps.home] };
}

export async function addMember(deps: ManageDeps, who: TeamCaller, request: AddRequest, ctx: CallContext): Promise<Record<string, unknown>> {
  const { registry, roster, courier } = deps;
  const caller = who.agentId;
  // The caller's own team of this id: another principal's team of the same id is another team.
  let team = registry.find(who.owner, request.teamId);
  if (team) requireManager(team, caller, deps.settings.allowMemberManage, "add members to");
  const preset = resolvePreset(request.modelPreset, deps.settings.modelPresets);
  // Checked before anything is made: the agent is configured, or Goose is there for a gosling.
  const cwd = request.agent === undefined ? roster.goslingHome() : roster.requireAgents().homeOf(request.agent);
  const images = await checkImages(request.imagePaths, imagePlaceOf(caller, deps));
  // Found again after the images were read: a concurrent add may have made the team meanwhile.
  team = registry.find(who.owner, request.teamId);
  if (team) requireManager(team, caller, deps.settings.allowMemberManage, "add members to");
  team ??= registry.create(request.teamId, caller, who.owner);
  const at = now();
  const member: MemberRecord = {
    agent_id: registry.newAgentId(),
    title: request.title ?? request.worktree?.name ?? "member",
    added_by: caller,
    added_at: at,
    removed_at: null,
    agent: request.agent ?? null,
    cwd,
    worktree: null,
    model_preset: request.modelPreset ?? null,
    options: preset ? ["--provider", preset.provider, "--model", preset.model] : [],
    session: null,
    gosling_id: null,
    agent_session_id: null,
    compaction_notices: request.compactionNotices,
    tokens: null,
    last_activity_at: at,
  };
  team.members.push(member);
  let worktree: CreatedWorktree | undefined;
  try {
    const launched = await roster.whileStarting(
      member.agent_id,
      async () => {
        worktree = await prepareWorktree(deps, who.owner, team, member, request);
        const onboarding = courier.record(team, {
          kind: "onboarding",
          from: caller,
          to: member.agent_id,
          scope: "direct",
          text: request.prompt ?? "",
          imagePaths: images,
          recipients: [member.agent_id],
        });
        const hasMessage = request.prompt !== undefined || images.length > 0;
        const turn = onboardingTurn({ team, member, adderTitle: registry.titleOf(caller), message: hasMessage ? onboarding.message : undefined });
        return { onboarding, ...(await roster.launch(team, member, turn, ctx)) };
      },
      true,
    );
    const { runner } = launched;
    courier.deliveredBy(team, launched.onboarding.deliveries[0]!, runner, launched.turn);
    // The add whose member starts first makes the team: a concurrent add that created it may have failed.
    const created = registry.started(team);
    if (created) deps.teamsChanged();
    courier.pump(member.agent_id);
    // The answer leaves once the team with its new member is on disk.
    await registry.saved(team);
    return {
      operation: "add",
      team_id: team.team_id,
      team_created: created,
      lead_agent_id: team.lead_agent_id,
      agent_id: member.agent_id,
      title: member.title,
      added_by: member.added_by,
      state: roster.state(member),
      agent: member.agent,
      gosling_id: member.gosling_id,
      agent_session_id: member.agent_session_id,
      session: member.session,
      cwd: member.cwd,
      worktree: member.worktree && {
        ...member.worktree,
        init_script: worktree ? (worktree.init.ran ? "ran" : "none") : "not run (existing worktree)",
        init_output: worktree?.init.ran ? worktree.init.output : null,
      },
      model_preset: member.model_preset,
      image_count: images.length,
      onboarding: { message_id: launched.onboarding.message.message_id, delivery_id: launched.onboarding.deliveries[0]!.delivery_id },
      next: `gg_team_message to talk to it; gg_team_status for the team; ${
        runner.kind === "gosling" ? `get_gosling_output (goose) with process_id` : `get_agent_output (agents) with session_id`
      } "${runner.id}" for its transcript`,
    };
  } catch (error) {
    await undoAdd(deps, team, member);
    throw error;
  }
}

/** The member's worktree, in the names of the principal whose team it joins. */
async function prepareWorktree(
  deps: ManageDeps,
  owner: string,
  team: TeamRecord,
  member: MemberRecord,
  request: AddRequest,
): Promise<CreatedWorktree | undefined> {
  if (!request.worktree) return undefined;
  const given = (teams: TeamRecord[]) => teams.flatMap((each) => each.members.flatMap((other) => (other.worktree ? [other.worktree] : [])));
  const theirs = given(deps.registry.all().filter((each) => each.owner !== owner));
  if (request.worktree.existing) {
    const recorded = given(deps.registry.ownedBy(owner)).map((worktree) => worktree.path);
    member.worktree = await deps.worktrees.reuse(owner, request.worktree.name, recorded, theirs);
    member.cwd = member.worktree.path;
    return undefined;
  }
  const created = await deps.worktrees.create(owner, request.worktree.name, { GG_TEAM_ID: team.team_id, GG_AGENT_ID: member.agent_id }, theirs);
  member.worktree = created.record;
  member.cwd = created.record.path;
  return created;
}

/**
 * A failed add leaves nothing behind: the member, a worktree made for it, and a team no member of has started once no
 * other add to it is left (concurrent first adds to a new team each try to drop it as they fail, whichever created it).
 */
async function undoAdd(deps: ManageDeps, team: TeamRecord, member: MemberRecord): Promise<void> {
  team.members = team.members.filter((candidate) => candidate !== member);
  team.deliveries = team.deliveries.filter((delivery) => delivery.to !== member.agent_id);
  team.messages = team.messages.filter((message) => message.to !== member.agent_id || message.kind !== "onboarding");
  deps.roster.forget(member.agent_id);
  if (deps.registry.drop(team)) deps.inbox.forgetTeam(team);
  // A started team was saved with the member (starting, or removed meanwhile): it is saved again without it.
  else await deps.registry.save(team);
  // A worktree whose init script failed was rolled back before the member got it; one made before a later failure goes now.
  if (member.worktree?.created) await deps.worktrees.rollback(member.worktree).catch(() => {});
}

export async function removeMembers(deps: ManageDeps, who: TeamCaller, request: RemoveRequest): Promise<Record<string, unknown>> {
  const { registry, roster, courier } = deps;
  const caller = who.agentId;
  const team = registry.get(request.teamId, who.owner);
  requireParticipant(team, caller);
  requireManager(team, caller, deps.settings.allowMemberManage, "remove members from");
  const results: Array<Record<string, unknown>> = [];
  for (const agentId of request.agentIds) {
    const member = team.members.find((candidate) => candidate.agent_id === agentId);
    const refuse = (code: string, message: string) => results.push({ agent_id: agentId, ok: false, error: { code, message } });
    if (agentId === team.lead_agent_id) refuse("INVALID_ARGS", `${agentId} is the lead of team ${team.team_id} and cannot be removed`);
    else if (!member) refuse("NOT_FOUND", `${agentId} is not a member of team ${team.team_id}`);
    else if (member.removed_at) refuse("INVALID_ARGS", `${agentId} was already removed at ${member.removed_at}`);
    else {
      const was = roster.state(member);
      // A member its add is still starting is never started: that add fails and takes back a worktree it made.
      const adding = roster.isAdding(agentId);
      try {
        const { wasWorking } = await roster.remove(member, `removed from team ${team.team_id} by ${caller}`);
        member.removed_at = now();
        courier.failWaiting(agentId, `${agentId} was removed from team ${team.team_id}`);
        const kept = member.worktree && !(adding && member.worktree.created) ? member.worktree : null;
        const left = kept
          ? `its worktree ${kept.path} (branch ${kept.branch}) was left in place`
          : adding
            ? "its add fails, and a worktree made for it goes with its branch"
            : "it had no worktree";
        results.push({
          agent_id: agentId,
          ok: true,
          state: "removed",
          was,
          gosling: member.gosling_id
            ? `released${wasWorking ? " (its turn was stopped)" : ""}; its transcript stays readable with get_gosling_output`
            : null,
          agent_session: member.agent_session_id
            ? `released${wasWorking ? " (its turn was cancelled)" : ""}; its transcript stays readable with get_agent_output`
            : null,
          worktree_left: kept?.path ?? null,
          note: `${agentId} was removed; ${left}.`,
        });
      } catch (error) {
        refuse("SESSION_ERROR", errorMessage(error));
      }
    }
  }
  await registry.save(team);
  const removed = results.filter((result) => result.ok === true).length;
  return { operation: "remove", team_id: team.team_id, removed_count: removed, failed_count: results.length - removed, results };
}
