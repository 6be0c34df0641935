// The built-in `team` child: agent teams of goslings and ACP agents, built from `[virtual.team]` on top of the goose
// and agents children.
import { join } from "node:path";
import { childEnv } from "../../children/processes/child-env.js";
import { logger } from "../../shared/log.js";
import type { TeamSettings } from "../../config/virtual/team.js";
import type { BuiltIn, VirtualContext } from "../context.js";
import { AgentsChild } from "../agents/agents-child.js";
import { GooseChild } from "../goose/goose-child.js";
import { Courier } from "./courier.js";
import { LeadInbox } from "./inbox.js";
import { TeamRegistry } from "./registry.js";
import { Roster, type MemberAgents } from "./roster.js";
import { TeamStore } from "./store.js";
import { TeamChild } from "./team-child.js";
import { Worktrees } from "./worktrees.js";
import { Visibility } from "../visibility.js";

/** Built on the goose and agents children, whose goslings and sessions its members are: left out without both. */
export const teamChild: BuiltIn<TeamSettings> = {
  create(settings, context, built) {
    const goose = built.get("goose");
    const agents = built.get("agents");
    const kinds: MemberAgents = {
      goose: goose instanceof GooseChild ? goose : undefined,
      agents: agents instanceof AgentsChild ? agents : undefined,
    };
    if (!kinds.goose && !kinds.agents) {
      return { leftOut: "its members are goslings or ACP agents, and there is neither a goose nor an agents child" };
    }
    return createTeamChild(settings, context, kinds);
  },
  check: (_settings, present) => (present.has("goose") || present.has("agents") ? { ok: true, notes: [] } : undefined),
};

function createTeamChild(settings: TeamSettings, context: VirtualContext, kinds: MemberAgents): TeamChild {
  const log = logger({ child: "team" });
  const registry = new TeamRegistry(new TeamStore(join(context.stateDir, "team", "teams"), log));
  const roster = new Roster(kinds, context.members);
  const inbox = new LeadInbox("team", context.switchboard, (agentId) => registry.titleOf(agentId));
  const courier = new Courier(registry, roster, inbox, log);
  // [virtual.goose] cwd, absolute: where goslings run, and the repository worktrees are made from, with Goose or without.
  const home = context.config.virtual.goose.cwd;
  const worktrees = new Worktrees({
    sourceCwd: home,
    configuredDir: settings.worktreesDir,
    stateDir: context.stateDir,
    graceMs: context.config.gateway.shutdownGraceMs,
    env: childEnv({}, true),
  });
  context.switchboard.onCallerGone((sessionId) => inbox.forgetSession(sessionId));
  const visibility = Visibility.of(context.inForce, context.members);
  // resources/list names inboxes only when it lists work (see teamResources); otherwise the notice changes nothing
  // and tells every client that someone made a team.
  const teamsChanged = () => {
    if (visibility.listsWork) context.switchboard.listChanged("team", "resources");
  };
  return new TeamChild(context.switchboard, {
    registry,
    roster,
    courier,
    home,
    worktrees,
    settings,
    inbox,
    teamsChanged,
    listsWork: () => visibility.listsWork,
  });
}
