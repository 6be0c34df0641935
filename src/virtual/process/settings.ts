// `[virtual.process]`: the settings of the built-in process manager, validated with the rest of the config.
import { z } from "zod";
import { closed, expected } from "../../config/zod-kit.js";

export const processSettingsSchema = closed({
  enabled: z.boolean(expected("true or false")).optional(),
  /** true: its tools also appear under their own names, whatever gateway.expose says. */
  expose: z.boolean(expected("true or false")).optional(),
}).transform((raw) => ({
  enabled: raw.enabled ?? true,
  expose: raw.expose ?? false,
}));

export type ProcessSettings = z.output<typeof processSettingsSchema>;
