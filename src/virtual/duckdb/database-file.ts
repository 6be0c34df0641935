// A database file as the duckdb child opens it: a regular file DuckDB made, or (for a child that writes) none yet.
import { open, stat } from "node:fs/promises";
import { GaggleError } from "../../shared/errors.js";

/** DuckDB's main header starts with an 8-byte checksum, then this magic. */
const MAGIC = "DUCK";
const MAGIC_AT = 8;

/**
 * Refuses what DuckDB should not open as a database: a folder, a device or pipe, or a file without DuckDB's header
 * (DuckDB would open a CSV as an in-memory database of views over it, or fail with a message about memory).
 * `shown` is the path as the caller gave it; an empty or missing file is DuckDB's to create.
 */
export async function checkDatabaseFile(path: string, shown: string): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined || (info.isFile() && info.size === 0)) return;
  const inPlace = `query a data file in place instead, as SELECT * FROM '${path}'`;
  if (!info.isFile()) {
    throw new GaggleError(
      "INVALID_ARGS",
      `database "${shown}" (${path}) is ${info.isDirectory() ? "a folder" : "not a regular file"}, not a DuckDB database file`,
      {
        hint: `give a DuckDB database file; ${inPlace.replace(`'${path}'`, `'${path}/*.csv'`)}`,
      },
    );
  }
  const header = Buffer.alloc(MAGIC_AT + MAGIC.length);
  const file = await open(path, "r");
  try {
    await file.read(header, 0, header.length, 0);
  } finally {
    await file.close();
  }
  if (header.toString("latin1", MAGIC_AT) !== MAGIC) {
    throw new GaggleError("INVALID_ARGS", `database "${shown}" (${path}) is not a DuckDB database file`, {
      hint: `\`database\` opens files DuckDB made; ${inPlace}, and leave \`database\` out`,
    });
  }
}
