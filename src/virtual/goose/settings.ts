// `[virtual.goose]`: the settings of the built-in Goose launcher, validated with the rest of the config.
import { z } from "zod";
import { closed, expected } from "../../config/zod-kit.js";

export const gooseSettingsSchema = closed({
  enabled: z.boolean(expected("true or false")).optional(),
  /** true: its tools also appear under their own names, whatever gateway.expose says. */
  expose: z.boolean(expected("true or false")).optional(),
}).transform((raw) => ({
  enabled: raw.enabled ?? true,
  expose: raw.expose ?? false,
}));

export type GooseSettings = z.output<typeof gooseSettingsSchema>;
