// `[virtual.goose]`: the settings of the built-in Goose launcher, validated with the rest of the config.
import { z } from "zod";
import { configCommand, configPath } from "../paths.js";
import { expected, oneOf, settingsTable } from "../zod-kit.js";
import { builtInSettings } from "./settings.js";
import { OptionError, parseRunOptions, type RunOption } from "./goose-options.js";

export const OUTPUT_FORMATS = ["stream-json", "text"] as const;
/** How goslings' turns run: over `goose acp` when Goose has it ("auto"), always ("acp"), or one `goose run` per turn ("run"). */
export const TRANSPORTS = ["auto", "acp", "run"] as const;

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

const flag = () => z.boolean(expected("true or false"));

/** As written, and what Goose is given when it is not: the table below fills each in. */
const table = settingsTable({
  /** Unset: on when Goose is found. true: on, and its missing command reported. */
  enabled: flag().optional(),
  expose: flag().optional(),
  command: z.string(expected("a command")).min(1, { error: "expected a command" }).default("goose"),
  /** Arguments placed before `run` (for a wrapper such as `command = "docker"`). */
  args: z.array(z.string(expected("a string")), expected("an array of strings")).default(() => []),
  env: z.record(z.string(), z.string(expected("a string")), expected("a table of strings")).default(() => ({})),
  /** Relative to the config file's folder; defaults to that folder. */
  cwd: z.string(expected("a directory path")).min(1).optional(),
  provider: z.string(expected("a provider name")).min(1).optional(),
  model: z.string(expected("a model name")).min(1).optional(),
  options: optionsSchema.default(() => []),
  output_format: oneOf(OUTPUT_FORMATS).default("stream-json"),
  transport: oneOf(TRANSPORTS).default("auto"),
  /** Goslings working at once, over every principal together. */
  max_active: count("an integer >= 1").default(5),
  /** Goslings one principal may have working at once; unset, all of max_active. */
  max_active_per_principal: count("an integer >= 1").optional(),
  /** Goslings held (not released) at once, over every principal together; also the released ones kept for their transcripts. */
  max_total: count("an integer >= 1").default(20),
  /** Goslings one principal may hold at once; unset, all of max_total. */
  max_total_per_principal: count("an integer >= 1").optional(),
  max_runtime_minutes: minutes("a number of minutes > 0").positive({ error: "expected a number of minutes > 0" }).default(30),
  max_output_bytes: count("an integer >= 1").default(1024 * 1024),
  max_prompts: count("an integer >= 1").default(10),
  idle_release_minutes: minutes("a number of minutes >= 0 (0 = never)").min(0, { error: "expected a number of minutes >= 0" }).default(10),
  dispatch_timeout_minutes: minutes("a number of minutes > 0").positive({ error: "expected a number of minutes > 0" }).default(10),
}).transform(({ enabled, ...settings }) => ({
  ...settings,
  enabled: enabled ?? true,
  /** Set by `enabled = true`: kept (and its missing command reported) even when its command is not found. */
  required: enabled === true,
}));

/** `command` made absolute when it is a path, `cwd` the config file's folder when not given. */
export const gooseSettings = builtInSettings(table, (settings, file) => ({
  ...settings,
  command: configCommand(settings.command, file),
  cwd: configPath(settings.cwd ?? ".", file),
}));

export type GooseSettings = ReturnType<typeof gooseSettings.absolute>;
