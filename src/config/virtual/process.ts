// `[virtual.process]`: the settings of the built-in process manager, validated with the rest of the config.
import { z } from "zod";
import { closed, durationMs, expected } from "../zod-kit.js";

export const PROCESS_DEFAULTS = {
  maxConcurrent: 32,
  maxOutputBytes: 20 * 1024 * 1024,
  defaultTimeoutMs: 600_000,
  keepFinished: 100,
} as const;

export const processSettingsSchema = closed({
  enabled: z.boolean(expected("true or false")).optional(),
  /** true: its tools also appear under their own names, whatever gateway.expose says. */
  expose: z.boolean(expected("true or false")).optional(),
  /** Processes running at once, over every client session. */
  max_concurrent: z.int(expected("an integer >= 1")).min(1).optional(),
  /** Output kept per process (both streams together); later bytes are dropped. */
  max_output_bytes: z.int(expected("a positive integer")).positive().optional(),
  /** Used when gg_process_run gives no timeout_ms; 0 = none. */
  default_timeout_ms: durationMs("an integer >= 0 (0 = no timeout)", { min: 0, zeroIsNone: true }).optional(),
  /** After SIGTERM, how long a process group gets before SIGKILL; defaults to gateway.shutdown_grace_ms. */
  kill_grace_ms: durationMs("an integer >= 0", { min: 0 }).optional(),
  /** Where output logs go; defaults to <state dir>/process. Relative to the config file's folder. */
  log_dir: z.string(expected("a directory path")).min(1).optional(),
  /** Finished processes remembered (with their logs); older ones are forgotten and their logs deleted. */
  keep_finished: z.int(expected("an integer >= 0")).min(0).optional(),
  /**
   * Checked when the child is created, never here: a policy that does not validate must deny every
   * command and say why, not stop gaggle from starting.
   */
  policy: z.unknown().optional(),
  policy_file: z.unknown().optional(),
}).transform((raw) => ({
  enabled: raw.enabled ?? true,
  expose: raw.expose ?? false,
  maxConcurrent: raw.max_concurrent ?? PROCESS_DEFAULTS.maxConcurrent,
  maxOutputBytes: raw.max_output_bytes ?? PROCESS_DEFAULTS.maxOutputBytes,
  defaultTimeoutMs: raw.default_timeout_ms ?? PROCESS_DEFAULTS.defaultTimeoutMs,
  killGraceMs: raw.kill_grace_ms,
  logDir: raw.log_dir,
  keepFinished: raw.keep_finished ?? PROCESS_DEFAULTS.keepFinished,
  policy: raw.policy,
  policyFile: raw.policy_file,
}));

export type ProcessSettings = z.output<typeof processSettingsSchema>;
