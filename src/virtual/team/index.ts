// The built-in `team` child: agent teams of goslings, built from `[virtual.team]` on top of the goose child.
import { join } from "node:path";
import type { Child } from "../../children/child.js";
import { childEnv } from "../../children/child-env.js";
import { logger } from "../../shared/log.js";
import type { VirtualContext } from "../context.js";
import type { GooseChild } from "../goose/goose-child.js";
import { Courier } from "./courier.js";
import { LeadInbox } from "./inbox.js";
import { TeamRegistry } from "./registry.js";
import { Roster } from "./roster.js";
import { TeamStore } from "./store.js";
import { TeamChild } from "./team-child.js";
import { Worktrees } from "./worktrees.js";

/** `goose` is the goose child, undefined when it is disabled. */
export function createTeamChild(context: VirtualContext, goose: GooseChild | undefined): Child | undefined {
  const settings = context.config.virtual.team;
  if (!settings.enabled) return undefined;
  const log = logger({ child: "team" });
  if (!goose) {
    log.info("the team child is left out: its members are goslings, and [virtual.goose] is disabled");
    return undefined;
  }
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
  return new TeamChild(context.switchboard, { registry, roster, courier, goose, worktrees, settings, inbox, teamsChanged });
}
