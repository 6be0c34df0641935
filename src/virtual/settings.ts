// The settings of every built-in virtual child, for the config schema: `[virtual.NAME]` tables.
import { z } from "zod";
import { closed, expected } from "../config/zod-kit.js";
import { gooseSettingsSchema, type GooseSettings } from "./goose/settings.js";
import { processSettingsSchema, type ProcessSettings } from "./process/settings.js";

export type { GooseSettings, ProcessSettings };

/** `team` is not built yet: its table is kept as written. */
const teamSettingsSchema = z.record(z.string(), z.unknown(), expected("a table"));

export interface VirtualSettings {
  process: ProcessSettings;
  goose: GooseSettings;
  team: Record<string, unknown>;
}

export const virtualSettingsSchema = closed({
  process: processSettingsSchema.optional(),
  goose: gooseSettingsSchema.optional(),
  team: teamSettingsSchema.optional(),
}).transform(
  (raw): VirtualSettings => ({
    process: raw.process ?? processSettingsSchema.parse({}),
    goose: raw.goose ?? gooseSettingsSchema.parse({}),
    team: raw.team ?? {},
  }),
);

export const VIRTUAL_DEFAULTS: VirtualSettings = virtualSettingsSchema.parse({});
