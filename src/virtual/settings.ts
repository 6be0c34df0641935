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
