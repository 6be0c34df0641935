// `[virtual.goose]`: the settings of the built-in Goose launcher, validated with the rest of the config.
import { z } from "zod";
import { closed, expected, oneOf } from "../zod-kit.js";
import { OptionError, parseRunOptions, type RunOption } from "./goose-options.js";

export const OUTPUT_FORMATS = ["stream-json", "text"] as const;

export const GOOSE_DEFAULTS = {
  command: "goose",
  outputFormat: "stream-json",
  maxActive: 5,
  maxTotal: 20,
  maxRuntimeMinutes: 30,
  maxOutputBytes: 1024 * 1024,
  maxPrompts: 10,
  idleReleaseMinutes: 10,
  dispatchTimeoutMinutes: 10,
} as const;

const count = (what: string) => z.int(expected(what)).min(1, { error: `expected ${what}` });
const minutes = (what: string) => z.number(expected(what));

/** `goose run` flags added to every turn: the same allowlist as run_goose's `options`. */
const optionsSchema = z.array(z.string(expected("a string")), expected("an array of strings")).transform((tokens, ctx): RunOption[] => {
  try {
    return parseRunOptions(tokens);
  } catch (error) {
    if (!(error instanceof OptionError)) throw error;
    ctx.addIssue({ code: "custom", message: error.message, input: tokens });
    return z.NEVER;
  }
});

export const gooseSettingsSchema = closed({
  enabled: z.boolean(expected("true or false")).optional(),
  /** true: its tools also appear under their own names, whatever gateway.expose says. */
  expose: z.boolean(expected("true or false")).optional(),
  command: z.string(expected("a command")).min(1, { error: "expected a command" }).optional(),
  /** Arguments placed before `run` (for a wrapper such as `command = "docker"`). */
  args: z.array(z.string(expected("a string")), expected("an array of strings")).optional(),
  env: z.record(z.string(), z.string(expected("a string")), expected("a table of strings")).optional(),
  /** Relative to the config file's folder; defaults to that folder. */
  cwd: z.string(expected("a directory path")).min(1).optional(),
  provider: z.string(expected("a provider name")).min(1).optional(),
  model: z.string(expected("a model name")).min(1).optional(),
  options: optionsSchema.optional(),
  output_format: oneOf(OUTPUT_FORMATS).optional(),
  max_active: count("an integer >= 1").optional(),
  max_total: count("an integer >= 1").optional(),
  max_runtime_minutes: minutes("a number of minutes > 0").positive({ error: "expected a number of minutes > 0" }).optional(),
  max_output_bytes: count("an integer >= 1").optional(),
  max_prompts: count("an integer >= 1").optional(),
  idle_release_minutes: minutes("a number of minutes >= 0 (0 = never)").min(0, { error: "expected a number of minutes >= 0" }).optional(),
  dispatch_timeout_minutes: minutes("a number of minutes > 0").positive({ error: "expected a number of minutes > 0" }).optional(),
}).transform((raw) => ({
  enabled: raw.enabled ?? true,
  /** Set by `enabled = true`: kept (and its missing command reported) even when its command is not found. */
  required: raw.enabled === true,
  expose: raw.expose ?? false,
  command: raw.command ?? GOOSE_DEFAULTS.command,
  args: raw.args ?? [],
  env: raw.env ?? {},
  cwd: raw.cwd,
  provider: raw.provider,
  model: raw.model,
  options: raw.options ?? [],
  outputFormat: raw.output_format ?? GOOSE_DEFAULTS.outputFormat,
  maxActive: raw.max_active ?? GOOSE_DEFAULTS.maxActive,
  maxTotal: raw.max_total ?? GOOSE_DEFAULTS.maxTotal,
  maxRuntimeMinutes: raw.max_runtime_minutes ?? GOOSE_DEFAULTS.maxRuntimeMinutes,
  maxOutputBytes: raw.max_output_bytes ?? GOOSE_DEFAULTS.maxOutputBytes,
  maxPrompts: raw.max_prompts ?? GOOSE_DEFAULTS.maxPrompts,
  idleReleaseMinutes: raw.idle_release_minutes ?? GOOSE_DEFAULTS.idleReleaseMinutes,
  dispatchTimeoutMinutes: raw.dispatch_timeout_minutes ?? GOOSE_DEFAULTS.dispatchTimeoutMinutes,
}));

export type GooseSettings = z.output<typeof gooseSettingsSchema>;
