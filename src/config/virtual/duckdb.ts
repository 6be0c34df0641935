// `[virtual.duckdb]`: the settings of the built-in SQL child on embedded DuckDB, validated with the rest of the config.
import { z } from "zod";
import { closed, directoryPaths, durationMs, expected } from "../zod-kit.js";

export const DUCKDB_DEFAULTS = {
  maxRows: 1000,
  maxBytes: 200_000,
  timeoutMs: 30_000,
} as const;

export const duckdbSettingsSchema = closed({
  /** Off unless asked for: queries read the files under its roots. */
  enabled: z.boolean(expected("true or false")).optional(),
  /** true: its tool also appears under its own name, whatever gateway.expose says. */
  expose: z.boolean(expected("true or false")).optional(),
  /** The folders queries and database files may reach; the config file's folder when not given. */
  roots: directoryPaths().optional(),
  /** true: statements that write (CREATE, INSERT, COPY ... TO) are allowed, and database files open for writing. */
  read_write: z.boolean(expected("true or false")).optional(),
  /** Rows an answer holds at most; more are counted and left out. */
  max_rows: z.int(expected("an integer >= 1")).min(1).optional(),
  /** Characters an answer's rows take at most; the rows past it are left out. */
  max_bytes: z.int(expected("an integer >= 1024")).min(1024).optional(),
  /** A query still running after this long is interrupted. */
  timeout_ms: durationMs("a positive integer", { min: 1 }).optional(),
}).transform((raw) => ({
  enabled: raw.enabled ?? false,
  expose: raw.expose ?? false,
  roots: raw.roots,
  readWrite: raw.read_write ?? false,
  maxRows: raw.max_rows ?? DUCKDB_DEFAULTS.maxRows,
  maxBytes: raw.max_bytes ?? DUCKDB_DEFAULTS.maxBytes,
  timeoutMs: raw.timeout_ms ?? DUCKDB_DEFAULTS.timeoutMs,
}));

/** `[virtual.duckdb]` as the schema reads it: `roots` as written, or undefined. */
export type DuckDbTable = z.output<typeof duckdbSettingsSchema>;
/** The settings the child is given: `roots` absolute, the config file's folder when none were written (see withAbsolutePaths). */
export type DuckDbSettings = Omit<DuckDbTable, "roots"> & { roots: string[] };
