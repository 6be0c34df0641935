// The built-in `team` child: agent teams of goslings, built from `[virtual.team]` on top of the goose child.
import { join } from "node:path";
import { childEnv } from "../../children/processes/child-env.js";
import { logger } from "../../shared/log.js";
import type { TeamSettings } from "../../config/virtual/team.js";
import type { BuiltIn, VirtualContext } from "../context.js";
import { GooseChild } from "../goose/goose-child.js";
import { Courier } from "./courier.js";
import { LeadInbox } from "./inbox.js";
import { TeamRegistry } from "./registry.js";
import { Roster } from "./roster.js";
import { TeamStore } from "./store.js";
import { TeamChild } from "./team-child.js";
import { Worktrees } from "./worktrees.js";
import { Visibility } from "../visibility.js";

/** Built on the goose child, whose goslings its members are: left out without it. */
export const teamChild: BuiltIn<TeamSettings> = {
  create(settings, context, built) {
    const goose = built.get("goose");
    if (!(goose instanceof GooseChild)) {
      logger({ child: "team" }).info("the team child is left out: its members are goslings, and there is no goose child");
      return undefined;
    }
    return createTeamChild(settings, context, goose);
  },
  check: (_settings, present) => (present.has("goose") ? { ok: true, notes: [] } : undefined),
};

function createTeamChild(settings: TeamSettings, context: VirtualContext, goose: GooseChild): TeamChild {
  const log = logger({ child: "team" });
  const registry = new TeamRegistry(new TeamStore(join(context.stateDir, "team", "teams"), log));
  const roster = new Roster(goose, context.members);
  const inbox = new LeadInbox("team", context.switchboard, (agentId) => registry.titleOf(agentId));
  const courier = new Courier(registry, roster, goose, inbox, log);
  const worktrees = new Worktrees({
    sourceCwd: goose.defaultCwd,
    configuredDir: settings.worktreesDir,
    stateDir: context.stateDir,
    graceMs: context.config.gateway.shutdownGraceMs,
    env: childEnv({}, true),
  });
  context.switchboard.onCallerGone((sessionId) => inbox.forgetSession(sessionId));
  const teamsChanged = () => context.switchboard.listChanged("team", "resources");
  const { listsWork } = Visibility.of(context.config, context.members);
  return new TeamChild(context.switchboard, { registry, roster, courier, goose, worktrees, settings, inbox, teamsChanged, listsWork });
}
