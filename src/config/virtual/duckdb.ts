// `[virtual.duckdb]`: the settings of the built-in SQL child on embedded DuckDB, validated with the rest of the config.
import { z } from "zod";
import { configPath } from "../paths.js";
import { directoryPaths, durationMs, expected, settingsTable } from "../zod-kit.js";
import { builtInSettings } from "./settings.js";

const flag = () => z.boolean(expected("true or false"));

const table = settingsTable({
  /** Off unless asked for: queries read the files under its roots. */
  enabled: flag().default(false),
  expose: flag().optional(),
  /** The folders queries and database files may reach; the config file's folder when not given. */
  roots: directoryPaths().optional(),
  /** true: statements that write (CREATE, INSERT, COPY ... TO) are allowed, and database files open for writing. */
  read_write: flag().default(false),
  /** Rows an answer holds at most; more are counted and left out. */
  max_rows: z.int(expected("an integer >= 1")).min(1).default(1000),
  /** Characters an answer's rows take at most; the rows past it are left out. */
  max_bytes: z.int(expected("an integer >= 1024")).min(1024).default(200_000),
  /** Bytes of a text or blob value an answer holds at most; a longer one is cut, read no further. */
  max_cell_bytes: z.int(expected("an integer >= 64")).min(64).default(20_000),
  /** Memory each database (a file, or a principal's in-memory one) may take, in megabytes; nothing spills to disk. */
  memory_limit_mb: z.int(expected("an integer >= 64")).min(64).default(1024),
  /** A query still running after this long is interrupted. */
  timeout_ms: durationMs("a positive integer", { min: 1 }).default(30_000),
});

export const duckdbSettings = builtInSettings(table, (settings, file) => ({
  ...settings,
  roots: (settings.roots ?? ["."]).map((root) => configPath(root, file)),
}));

/** The settings the child is given: `roots` absolute, the config file's folder when none were written. */
export type DuckDbSettings = ReturnType<typeof duckdbSettings.absolute>;
