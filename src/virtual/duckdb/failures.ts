// DuckDB's own errors, in the shape every failure has: the code that fits, DuckDB's message, and what to do.
import { join } from "node:path";
import { GaggleError, errorMessage } from "../../shared/errors.js";

/**
 * A failure of a query; a refused file names the roots in its hint. DuckDB's error type is read from the message's
 * prefix ("Permission Error: ..."): @duckdb/node-api throws plain Errors with a message and nothing more (the C
 * API's duckdb_result_error_type has no binding). test/virtual/duckdb/ pins the prefixes a query meets to real DuckDB.
 */
export function duckdbFailure(error: unknown, roots: string[]): GaggleError {
  const message = errorMessage(error).trim();
  if (message.startsWith("Permission Error")) {
    const example = join(roots[0] ?? "/", "FILE.csv");
    return new GaggleError("PERMISSION_DENIED", message, {
      hint:
        `queries reach only files under the roots (${roots.join(", ")}; [virtual.duckdb] roots): name a file under them, ` +
        `absolute ('${example}') or, in a query, relative to the first root ('FILE.csv')`,
    });
  }
  if (message.startsWith("Out of Memory Error")) {
    return new GaggleError("LIMIT_REACHED", firstLine(message), {
      hint: "narrow the query (a WHERE, fewer columns, an aggregate), or raise [virtual.duckdb] memory_limit_mb",
    });
  }
  if (message.startsWith("Out of Range Error") && /maximum supported .*size/i.test(message)) {
    return new GaggleError("LIMIT_REACHED", firstLine(message), { hint: "build a smaller value: DuckDB cannot hold this one" });
  }
  return new GaggleError("EXECUTION_ERROR", message, { hint: "fix the SQL; DuckDB's error names the line and what it expected" });
}

/**
 * A database file that DuckDB would not open. `shown` is the path as the caller gave it. DuckDB opens a file that
 * is not a database (a CSV) as an in-memory database of views over it, which a read-only child refuses with a
 * message about memory: a file without DuckDB's header is refused before DuckDB sees it (see databaseHeader).
 */
export function openFailure(error: unknown, shown: string, path: string): GaggleError {
  const message = firstLine(errorMessage(error).trim());
  if (/Could not set lock on file/i.test(message)) {
    return new GaggleError("EXECUTION_ERROR", `database "${shown}" (${path}) is in use: ${message}`, {
      hint: "another process holds it open for writing; close that process, or query a copy",
    });
  }
  if (message.startsWith("Out of Memory Error")) {
    return new GaggleError("LIMIT_REACHED", `database "${shown}" (${path}) does not fit: ${message}`, {
      hint: "raise [virtual.duckdb] memory_limit_mb",
    });
  }
  return new GaggleError("EXECUTION_ERROR", `database "${shown}" (${path}) cannot be opened: ${message}`, {
    hint: "give a DuckDB database file (made by DuckDB); query other files in place, as SELECT * FROM 'FILE.csv'",
  });
}

/** DuckDB's messages run on with advice for its own shell; the first line says what failed. */
function firstLine(message: string): string {
  return message.split("\n", 1)[0]!;
}
