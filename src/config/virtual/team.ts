// `[virtual.team]`: the settings of the built-in team child, validated with the rest of the config.
import { z } from "zod";
import { configPath } from "../paths.js";
import { closed, expected, settingsTable } from "../zod-kit.js";
import { builtInSettings } from "./settings.js";

/** Preset names are what a caller types as `model_preset`: kept plain. */
export const PRESET_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const nonEmpty = (what: string) => z.string(expected(what)).min(1, { error: `expected ${what}` });
const flag = () => z.boolean(expected("true or false"));

const presetSchema = closed({
  provider: nonEmpty("a Goose provider name"),
  model: nonEmpty("a model name"),
});

const table = settingsTable({
  enabled: flag().default(true),
  expose: flag().optional(),
  /** true: any member may add and remove members of its team, not only the lead. */
  allow_member_manage: flag().default(false),
  /** Where `worktree_name` checkouts go (one folder per name); relative to the config file's folder. */
  worktrees_dir: nonEmpty("a directory path").optional(),
  /** `[virtual.team.model_presets.NAME]`: `provider` and `model`, passed to Goose as --provider and --model. */
  model_presets: z
    .record(z.string(), presetSchema, expected("a table of presets"))
    .superRefine((presets, ctx) => {
      for (const name of Object.keys(presets)) {
        if (PRESET_NAME_PATTERN.test(name)) continue;
        ctx.addIssue({ code: "custom", path: [name], message: "preset names match [A-Za-z0-9][A-Za-z0-9._-]*", input: name });
      }
    })
    .default(() => ({})),
});

export const teamSettings = builtInSettings(table, (settings, file) => ({
  ...settings,
  ...(settings.worktreesDir !== undefined && { worktreesDir: configPath(settings.worktreesDir, file) }),
}));

export type TeamSettings = ReturnType<typeof teamSettings.absolute>;
export type ModelPreset = TeamSettings["modelPresets"][string];
