// DuckDB's own errors, in the shape every failure has: the code that fits, DuckDB's message, and what to do.
import { join } from "node:path";
import { GaggleError, errorMessage } from "../../shared/errors.js";

/** A failure of a query; a refused file names the roots in its hint. */
export function duckdbFailure(error: unknown, roots: string[]): GaggleError {
  const message = errorMessage(error).trim();
  if (message.startsWith("Permission Error")) {
    // DuckDB reads a relative path from gaggle's working directory, which need not be under any root.
    const example = join(roots[0] ?? "/", "FILE.csv");
    return new GaggleError("PERMISSION_DENIED", message, {
      hint: `queries reach only files under the roots (${roots.join(", ")}; [virtual.duckdb] roots): name a file by its absolute path, as '${example}'`,
    });
  }
  return new GaggleError("EXECUTION_ERROR", message, { hint: "fix the SQL; DuckDB's error names the line and what it expected" });
}
