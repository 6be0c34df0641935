// `[virtual.workspace]`: the settings of the built-in shell and file tools (gomcptest's Bash, Edit, View, ...), validated with the rest of the config.
import { z } from "zod";
import { closed, directoryPaths, durationMs, expected } from "../zod-kit.js";

/** A Bash call may ask for at most this long (gomcptest's own bound): past it a command belongs in the process child. */
export const BASH_TIMEOUT_CEILING_MS = 600_000;

export const WORKSPACE_DEFAULTS = {
  timeoutMs: 120_000,
  maxTimeoutMs: BASH_TIMEOUT_CEILING_MS,
  maxOutputChars: 30_000,
  maxEditBytes: 10 * 1024 * 1024,
  maxImageBytes: 5 * 1024 * 1024,
  maxResults: 1000,
} as const;

export const workspaceSettingsSchema = closed({
  /** Off unless asked for: it grants a shell and file writes. */
  enabled: z.boolean(expected("true or false")).optional(),
  /** true: its tools also appear under their own names, whatever gateway.expose says. */
  expose: z.boolean(expected("true or false")).optional(),
  /**
   * The folders its file tools may reach; the config file's folder when not given. Shells start in the first client
   * root that lies under one of them, else in the first of them.
   */
  roots: directoryPaths().min(1, "expected at least one directory").optional(),
  /** A Bash call that gives no timeout gets this long. */
  timeout_ms: durationMs("an integer from 1 to 600000", { min: 1, max: BASH_TIMEOUT_CEILING_MS }).optional(),
  /** The longest timeout a Bash call may ask for. */
  max_timeout_ms: durationMs("an integer from 1 to 600000", { min: 1, max: BASH_TIMEOUT_CEILING_MS }).optional(),
  /** Characters of a command's output an answer holds; the rest are counted and dropped. */
  max_output_chars: z.int(expected("an integer >= 1000")).min(1000).optional(),
  /** Files larger than this are not edited. */
  max_edit_bytes: z.int(expected("a positive integer")).positive().optional(),
  /** Images larger than this are not returned by View. */
  max_image_bytes: z.int(expected("a positive integer")).positive().optional(),
  /** Files GlobTool and LS list, and lines GrepTool shows, at most; a note says when more were left out. */
  max_results: z.int(expected("an integer >= 1")).min(1).optional(),
  /**
   * true: Edit and Replace copy a file's old content to FILE.bak before they change it. Off by default: git is the
   * usual undo, and stray .bak files show in `git status` and in searches.
   */
  backups: z.boolean(expected("true or false")).optional(),
  /** true: GrepTool searches with ripgrep (`rg`) when it is on PATH; false: always with its own JavaScript search. */
  ripgrep: z.boolean(expected("true or false")).optional(),
  /** After SIGTERM, how long a command's process group (or a session's shell) gets before SIGKILL; defaults to gateway.shutdown_grace_ms. */
  kill_grace_ms: durationMs("an integer >= 0", { min: 0 }).optional(),
  /**
   * A command policy as [virtual.process] takes it; checked when the child is created, never here: a policy
   * that does not validate must refuse every command and say why, not stop gaggle from starting.
   */
  policy: z.unknown().optional(),
  policy_file: z.unknown().optional(),
}).transform((raw, ctx) => {
  if (raw.timeout_ms !== undefined && raw.max_timeout_ms !== undefined && raw.timeout_ms > raw.max_timeout_ms) {
    ctx.addIssue({
      code: "custom",
      path: ["timeout_ms"],
      input: raw.timeout_ms,
      message: `expected at most max_timeout_ms (${raw.max_timeout_ms}), got ${raw.timeout_ms}`,
    });
  }
  return {
    enabled: raw.enabled ?? false,
    expose: raw.expose ?? false,
    roots: raw.roots,
    timeoutMs: raw.timeout_ms ?? Math.min(WORKSPACE_DEFAULTS.timeoutMs, raw.max_timeout_ms ?? WORKSPACE_DEFAULTS.maxTimeoutMs),
    maxTimeoutMs: raw.max_timeout_ms ?? WORKSPACE_DEFAULTS.maxTimeoutMs,
    maxOutputChars: raw.max_output_chars ?? WORKSPACE_DEFAULTS.maxOutputChars,
    maxEditBytes: raw.max_edit_bytes ?? WORKSPACE_DEFAULTS.maxEditBytes,
    maxImageBytes: raw.max_image_bytes ?? WORKSPACE_DEFAULTS.maxImageBytes,
    maxResults: raw.max_results ?? WORKSPACE_DEFAULTS.maxResults,
    backups: raw.backups ?? false,
    ripgrep: raw.ripgrep ?? true,
    killGraceMs: raw.kill_grace_ms,
    policy: raw.policy,
    policyFile: raw.policy_file,
  };
});

/** `[virtual.workspace]` as the schema reads it: `roots` as written, or undefined. */
export type WorkspaceTable = z.output<typeof workspaceSettingsSchema>;
/** The settings the child is given: `roots` absolute, the config file's folder when none were written (see withAbsolutePaths). */
export type WorkspaceSettings = Omit<WorkspaceTable, "roots"> & { roots: string[] };
