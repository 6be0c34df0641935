// `[virtual.workspace]`: the settings of the built-in shell and file tools (gomcptest's Bash, Edit, View, ...), validated with the rest of the config.
import { z } from "zod";
import { configPath } from "../paths.js";
import { camelKeys, closed, directoryPaths, durationMs, expected } from "../zod-kit.js";
import { builtInSettings } from "./settings.js";

/** A Bash call may ask for at most this long (gomcptest's own bound): past it a command belongs in the process child. */
export const BASH_TIMEOUT_CEILING_MS = 600_000;

/** What a Bash call that gives no timeout gets, unless max_timeout_ms is shorter. */
const DEFAULT_TIMEOUT_MS = 120_000;

const flag = () => z.boolean(expected("true or false"));

/** Check option: the rule between two keys runs only once each is right by itself. */
const wellFormed = { when: (payload: z.core.ParsePayload): boolean => payload.issues.length === 0 };

const table = closed({
  /** Off unless asked for: it grants a shell and file writes. */
  enabled: flag().default(false),
  expose: flag().optional(),
  /**
   * The folders its file tools may reach; the config file's folder when not given. Shells start in the first client
   * root that lies under one of them, else in the first of them.
   */
  roots: directoryPaths().min(1, "expected at least one directory").optional(),
  /** A Bash call that gives no timeout gets this long. */
  timeout_ms: durationMs("an integer from 1 to 600000", { min: 1, max: BASH_TIMEOUT_CEILING_MS }).optional(),
  /** The longest timeout a Bash call may ask for. */
  max_timeout_ms: durationMs("an integer from 1 to 600000", { min: 1, max: BASH_TIMEOUT_CEILING_MS }).default(BASH_TIMEOUT_CEILING_MS),
  /** Characters of a command's output an answer holds; the rest are counted and dropped. */
  max_output_chars: z.int(expected("an integer >= 1000")).min(1000).default(30_000),
  /**
   * How many processes a session's Bash commands may run at once (the commands, what they leave in the background,
   * and their descendants); past it every one of them is killed. Counted by gaggle, so it holds where RLIMIT_NPROC
   * does not (as root).
   */
  max_processes: z.int(expected("an integer >= 1")).min(1).default(256),
  /** Files larger than this are not edited. */
  max_edit_bytes: z
    .int(expected("a positive integer"))
    .positive()
    .default(10 * 1024 * 1024),
  /** Images larger than this are not returned by View. */
  max_image_bytes: z
    .int(expected("a positive integer"))
    .positive()
    .default(5 * 1024 * 1024),
  /** Files GlobTool and LS list, and lines GrepTool shows, at most; a note says when more were left out. */
  max_results: z.int(expected("an integer >= 1")).min(1).default(1000),
  /**
   * true: Edit and Replace copy a file's old content to FILE.bak before they change it. Off by default: git is the
   * usual undo, and stray .bak files show in `git status` and in searches.
   */
  backups: flag().default(false),
  /** true: GrepTool searches with ripgrep (`rg`) when it is on PATH; false: always with its own JavaScript search. */
  ripgrep: flag().default(true),
  /** After SIGTERM, how long a command's process group (or a session's shell) gets before SIGKILL; defaults to gateway.shutdown_grace_ms. */
  kill_grace_ms: durationMs("an integer >= 0", { min: 0 }).optional(),
  /**
   * A command policy as [virtual.process] takes it; checked when the child is created, never here: a policy
   * that does not validate must refuse every command and say why, not stop gaggle from starting.
   */
  policy: z.unknown().optional(),
  policy_file: z.unknown().optional(),
})
  .superRefine((raw, ctx) => {
    if (raw.timeout_ms !== undefined && raw.timeout_ms > raw.max_timeout_ms) {
      ctx.addIssue({
        code: "custom",
        path: ["timeout_ms"],
        input: raw.timeout_ms,
        message: `expected at most max_timeout_ms (${raw.max_timeout_ms}), got ${raw.timeout_ms}`,
      });
    }
  }, wellFormed)
  .transform(({ timeout_ms, ...raw }) => ({
    ...camelKeys(raw),
    timeoutMs: timeout_ms ?? Math.min(DEFAULT_TIMEOUT_MS, raw.max_timeout_ms),
  }));

/** `roots` absolute: the config file's folder when none were written. */
export const workspaceSettings = builtInSettings(table, (settings, file) => ({
  ...settings,
  roots: (settings.roots ?? ["."]).map((root) => configPath(root, file)),
}));

export type WorkspaceSettings = ReturnType<typeof workspaceSettings.absolute>;
