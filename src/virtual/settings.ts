// The settings of every built-in virtual child, for the config schema: `[virtual.NAME]` tables.
import { closed } from "../config/zod-kit.js";
import { gooseSettingsSchema, type GooseSettings } from "./goose/settings.js";
import { processSettingsSchema, type ProcessSettings } from "./process/settings.js";
import { teamSettingsSchema, type TeamSettings } from "./team/settings.js";

export type { GooseSettings, ProcessSettings, TeamSettings };

export interface VirtualSettings {
  process: ProcessSettings;
  goose: GooseSettings;
  team: TeamSettings;
}

export const virtualSettingsSchema = closed({
  process: processSettingsSchema.optional(),
  goose: gooseSettingsSchema.optional(),
  team: teamSettingsSchema.optional(),
}).transform(
  (raw): VirtualSettings => ({
    process: raw.process ?? processSettingsSchema.parse({}),
    goose: raw.goose ?? gooseSettingsSchema.parse({}),
    team: raw.team ?? teamSettingsSchema.parse({}),
  }),
);

export const VIRTUAL_DEFAULTS: VirtualSettings = virtualSettingsSchema.parse({});

/** How the config file reads a path and a command (see config/paths.ts). */
export interface PathReader {
  path(path: string): string;
  command(command: string): string;
}

/**
 * The settings with every path in them absolute, read as paths are read everywhere in the config file.
 * goose's `cwd` defaults to the config file's folder. A `policy_file` is read by the process child itself,
 * which reports a bad one as a policy that denies everything.
 */
export function withAbsolutePaths(settings: VirtualSettings, read: PathReader): VirtualSettings {
  const { process, goose, team } = settings;
  return {
    process: { ...process, ...(process.logDir !== undefined && { logDir: read.path(process.logDir) }) },
    goose: { ...goose, command: read.command(goose.command), cwd: read.path(goose.cwd ?? ".") },
    team: { ...team, ...(team.worktreesDir !== undefined && { worktreesDir: read.path(team.worktreesDir) }) },
  };
}
