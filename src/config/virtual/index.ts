// The settings of every built-in virtual child, for the config schema: `[virtual.NAME]` tables.
import { configCommand, configPath, type PathOptions } from "../paths.js";
import { closed } from "../zod-kit.js";
import { duckdbSettingsSchema, type DuckDbSettings, type DuckDbTable } from "./duckdb.js";
import { gooseSettingsSchema, type GooseSettings } from "./goose.js";
import { imagenSettingsSchema, type ImagenSettings } from "./imagen.js";
import { processSettingsSchema, type ProcessSettings } from "./process.js";
import { teamSettingsSchema, type TeamSettings } from "./team.js";
import { workspaceSettingsSchema, type WorkspaceSettings, type WorkspaceTable } from "./workspace.js";

export type { DuckDbSettings, GooseSettings, ImagenSettings, ProcessSettings, TeamSettings, WorkspaceSettings };

export interface VirtualSettings {
  process: ProcessSettings;
  goose: GooseSettings;
  team: TeamSettings;
  duckdb: DuckDbSettings;
  imagen: ImagenSettings;
  workspace: WorkspaceSettings;
}

/** The tables as the schema reads them, before withAbsolutePaths: the roots of duckdb and workspace as written. */
export type VirtualTables = Omit<VirtualSettings, "duckdb" | "workspace"> & { duckdb: DuckDbTable; workspace: WorkspaceTable };

export const virtualSettingsSchema = closed({
  process: processSettingsSchema.optional(),
  goose: gooseSettingsSchema.optional(),
  team: teamSettingsSchema.optional(),
  duckdb: duckdbSettingsSchema.optional(),
  imagen: imagenSettingsSchema.optional(),
  workspace: workspaceSettingsSchema.optional(),
}).transform((raw): VirtualTables => ({
  process: raw.process ?? processSettingsSchema.parse({}),
  goose: raw.goose ?? gooseSettingsSchema.parse({}),
  team: raw.team ?? teamSettingsSchema.parse({}),
  duckdb: raw.duckdb ?? duckdbSettingsSchema.parse({}),
  imagen: raw.imagen ?? imagenSettingsSchema.parse({}),
  workspace: raw.workspace ?? workspaceSettingsSchema.parse({}),
}));

export const VIRTUAL_DEFAULTS: VirtualTables = virtualSettingsSchema.parse({});

/**
 * The settings with every path in them absolute, read as paths are read everywhere in the config file.
 * goose's `cwd` and the `roots` of duckdb and workspace default to the config file's folder. A `policy_file` is read by the process child itself,
 * which reports a bad one as a policy that denies everything.
 */
export function withAbsolutePaths(settings: VirtualTables, file: PathOptions): VirtualSettings {
  const { process, goose, team, duckdb, imagen, workspace } = settings;
  return {
    process: { ...process, ...(process.logDir !== undefined && { logDir: configPath(process.logDir, file) }) },
    goose: { ...goose, command: configCommand(goose.command, file), cwd: configPath(goose.cwd ?? ".", file) },
    team: { ...team, ...(team.worktreesDir !== undefined && { worktreesDir: configPath(team.worktreesDir, file) }) },
    duckdb: { ...duckdb, roots: (duckdb.roots ?? ["."]).map((root) => configPath(root, file)) },
    imagen: {
      ...imagen,
      ...(imagen.outputDir !== undefined && { outputDir: configPath(imagen.outputDir, file) }),
      ...(imagen.credentialsFile !== undefined && { credentialsFile: configPath(imagen.credentialsFile, file) }),
    },
    workspace: { ...workspace, roots: (workspace.roots ?? ["."]).map((root) => configPath(root, file)) },
  };
}
