// `[virtual.process]`: the settings of the built-in process manager, validated with the rest of the config.
import { z } from "zod";
import { configPath } from "../paths.js";
import { durationMs, expected, settingsTable } from "../zod-kit.js";
import { builtInSettings } from "./settings.js";

const flag = () => z.boolean(expected("true or false"));

const table = settingsTable({
  enabled: flag().default(true),
  expose: flag().optional(),
  /** Processes running at once, over every principal together. */
  max_concurrent: z.int(expected("an integer >= 1")).min(1).default(32),
  /** Processes one principal may run at once; unset, a principal may run all of max_concurrent. */
  max_concurrent_per_principal: z.int(expected("an integer >= 1")).min(1).optional(),
  /**
   * Live processes one principal's background commands may run at once (with everything they started); past it
   * every one of them is killed. Counted by gaggle, so it holds where RLIMIT_NPROC does not (as root).
   */
  max_processes: z.int(expected("an integer >= 1")).min(1).default(256),
  /** Output kept per process (both streams together); later bytes are dropped. */
  max_output_bytes: z
    .int(expected("a positive integer"))
    .positive()
    .default(20 * 1024 * 1024),
  /** Used when gg_process_run gives no timeout_ms; 0 = none. */
  default_timeout_ms: durationMs("an integer >= 0 (0 = no timeout)", { min: 0, zeroIsNone: true }).default(600_000),
  /** After SIGTERM, how long a process group gets before SIGKILL; defaults to gateway.shutdown_grace_ms. */
  kill_grace_ms: durationMs("an integer >= 0", { min: 0 }).optional(),
  /** Where output logs go; defaults to <state dir>/process. Relative to the config file's folder. */
  log_dir: z.string(expected("a directory path")).min(1).optional(),
  /** Finished processes remembered (with their logs); past it, the oldest of whoever keeps the most are forgotten, logs deleted. */
  keep_finished: z.int(expected("an integer >= 0")).min(0).default(100),
  /**
   * Checked when the child is created, never here: a policy that does not validate must deny every
   * command and say why, not stop gaggle from starting.
   */
  policy: z.unknown().optional(),
  policy_file: z.unknown().optional(),
});

/** A `policy_file` is read by the child itself, which reports a bad one as a policy that denies everything. */
export const processSettings = builtInSettings(table, (settings, file) => ({
  ...settings,
  ...(settings.logDir !== undefined && { logDir: configPath(settings.logDir, file) }),
}));

export type ProcessSettings = ReturnType<typeof processSettings.absolute>;
