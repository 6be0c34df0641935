// The settings of every built-in child, for the config schema: `[virtual.NAME]` tables, one entry per child. A
// built-in child is its settings here and its child in virtual/NAME/, registered in virtual/index.ts (the compiler
// asks for that entry once this one is there).
import type { z } from "zod";
import type { PathOptions } from "../paths.js";
import { closed } from "../zod-kit.js";
import { agentsSettings, type AgentsSettings } from "./agents.js";
import { duckdbSettings, type DuckDbSettings } from "./duckdb.js";
import { gooseSettings, type GooseSettings } from "./goose.js";
import { imagenSettings, type ImagenSettings } from "./imagen.js";
import { processSettings, type ProcessSettings } from "./process.js";
import type { BuiltInSettings } from "./settings.js";
import { teamSettings, type TeamSettings } from "./team.js";
import { workspaceSettings, type WorkspaceSettings } from "./workspace.js";

export type { AgentsSettings, DuckDbSettings, GooseSettings, ImagenSettings, ProcessSettings, TeamSettings, WorkspaceSettings };

/** In the order the children are built: one built on another (agents on process, team on goose and agents) comes after it. */
export const BUILT_IN_SETTINGS = {
  process: processSettings,
  goose: gooseSettings,
  agents: agentsSettings,
  team: teamSettings,
  duckdb: duckdbSettings,
  imagen: imagenSettings,
  workspace: workspaceSettings,
} as const;

export type BuiltInName = keyof typeof BUILT_IN_SETTINGS;
/** Each table as written, defaults filled in. */
export type VirtualTables = { [K in BuiltInName]: z.output<(typeof BUILT_IN_SETTINGS)[K]["table"]> };
/** Each child's settings, as the child is given them: every path absolute. */
export type VirtualSettings = { [K in BuiltInName]: ReturnType<(typeof BUILT_IN_SETTINGS)[K]["absolute"]> };

/** Names of the built-in children; no configured server may use them. */
export const VIRTUAL_CHILD_NAMES = Object.keys(BUILT_IN_SETTINGS) as BuiltInName[];

/** Each entry of BUILT_IN_SETTINGS through `read`, under its name: the one place the names meet their types. */
function eachBuiltIn<Out extends { [K in BuiltInName]: unknown }>(read: (settings: BuiltInSettings, name: BuiltInName) => unknown): Out {
  return Object.fromEntries(VIRTUAL_CHILD_NAMES.map((name) => [name, read(BUILT_IN_SETTINGS[name] as BuiltInSettings, name)])) as Out;
}

export const VIRTUAL_DEFAULTS: VirtualTables = eachBuiltIn((settings) => settings.table.parse({}));

/** The `[virtual]` table of the file at `file`: every child's table (the defaults for one not written), its paths absolute. */
export function virtualSettingsSchema(file: PathOptions) {
  type Tables = { [K in BuiltInName]: z.ZodPrefault<(typeof BUILT_IN_SETTINGS)[K]["table"]> };
  return closed(eachBuiltIn<Tables>((settings) => settings.table.prefault({}))).transform((written): VirtualSettings =>
    eachBuiltIn((settings, name) => settings.absolute(written[name], file)),
  );
}
