// The built-in children gaggle registers beside the configured ones, each answering through the router.
import type { Child } from "../children/child.js";
import type { Switchboard } from "../children/switchboard.js";
import type { GaggleConfig } from "../config/index.js";
import type { MemberUrls } from "./context.js";
import { createDuckDbChild } from "./duckdb/index.js";
import { createGooseChild } from "./goose/index.js";
import { createImagenChild } from "./imagen/index.js";
import { createProcessChild, processSettingsProblems } from "./process/index.js";
import { stateDir } from "../config/index.js";
import { createTeamChild } from "./team/index.js";
import { createWorkspaceChild, workspaceSettingsProblems } from "./workspace/index.js";

export type { MemberUrl, MemberUrls } from "./context.js";

/** The enabled built-in children; the team child is built on the goose child, whose goslings its members are. */
export function createVirtualChildren(config: GaggleConfig, switchboard: Switchboard, members: MemberUrls): Child[] {
  const context = { config, switchboard, stateDir: stateDir(config), members };
  const process = createProcessChild(context);
  const goose = createGooseChild(context);
  const team = createTeamChild(context, goose);
  return [process, goose, team, createDuckDbChild(context), createImagenChild(context), createWorkspaceChild(context)].filter(
    (child) => child !== undefined,
  );
}

/**
 * Settings of the built-in children that validate as config but would leave a child unable to work; each
 * problem names its source. At serve time such a child still starts, refusing what it cannot do safely.
 */
export function virtualSettingsProblems(config: GaggleConfig): string[] {
  return [...processSettingsProblems(config), ...workspaceSettingsProblems(config)];
}
