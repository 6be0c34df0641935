// Relative file paths in queries, read from the first root. DuckDB resolves a relative path against the working
// directory of gaggle's process, which no query should depend on; its file_search_path does not help, since the
// path is checked against allowed_directories before it is searched for. So each file literal a query names
// relatively is replaced, in the text, by the same literal made absolute: everything else stays as written
// (column names included), and allowed_directories still checks the absolute path.
import { isAbsolute, resolve } from "node:path";
import { nodesOf } from "./parsed-sql.js";

/** Table functions whose first argument is a file path, a glob, or a list of them. */
const FILE_READERS = new Set([
  "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json", "read_json_auto", "read_json_objects",
  "read_json_objects_auto", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects", "read_text", "read_blob",
  "sniff_csv", "glob", "parquet_metadata", "parquet_schema", "parquet_file_metadata", "parquet_kv_metadata",
  "parquet_full_metadata", "parquet_bloom_probe",
]); // prettier-ignore

/** A string literal in the text: where it starts, and what it says. */
interface FileLiteral {
  at: number;
  path: string;
}

/**
 * `sql` with every relative file path its queries name (a quoted file as a table, `FROM 'sales.csv'`, or the
 * first argument of a file reader) made absolute from `root`. `statements` are the queries' trees, parsed from `sql`.
 */
export function resolveRelativePaths(sql: string, statements: unknown[], root: string): string {
  const literals = statements.flatMap(fileLiterals).filter(({ path }) => isRelativeFile(path));
  // From the end, so the offsets of the literals before each one stay true.
  literals.sort((a, b) => b.at - a.at);
  let text = sql;
  for (const { at, path } of literals) {
    const end = literalEnd(text, at, path);
    if (end !== undefined) text = text.slice(0, at) + quoted(resolve(root, path), text[at]!) + text.slice(end);
  }
  return text;
}

function fileLiterals(statement: unknown): FileLiteral[] {
  const found: FileLiteral[] = [];
  for (const node of nodesOf(statement)) {
    // A file named as a table: DuckDB's replacement scan reads it (a name with no schema, written quoted).
    if (node.type === "BASE_TABLE" && !node.schema_name && !node.catalog_name && typeof node.table_name === "string") {
      const at = node.query_location;
      if (typeof at === "number") found.push({ at, path: node.table_name });
    }
    if (node.type === "TABLE_FUNCTION") {
      const call = node.function as { function_name?: unknown; children?: unknown[] } | undefined;
      if (typeof call?.function_name !== "string" || !FILE_READERS.has(call.function_name.toLowerCase())) continue;
      const first = call.children?.[0] as { class?: string; function_name?: string; children?: unknown[] } | undefined;
      // One path, or a list of them ([...] parses as list_value).
      const items = first?.class === "FUNCTION" && first.function_name === "list_value" ? (first.children ?? []) : [first];
      for (const item of items) {
        const literal = stringConstant(item);
        if (literal) found.push(literal);
      }
    }
  }
  return found;
}

function stringConstant(node: unknown): FileLiteral | undefined {
  const constant = node as { class?: string; query_location?: unknown; value?: { type?: { id?: string }; value?: unknown } } | undefined;
  if (constant?.class !== "CONSTANT" || constant.value?.type?.id !== "VARCHAR") return undefined;
  const { query_location: at, value } = constant;
  return typeof at === "number" && typeof value.value === "string" ? { at, path: value.value } : undefined;
}

/** A local path not anchored anywhere: not absolute, not the home folder (~), not a URL. */
function isRelativeFile(path: string): boolean {
  return path !== "" && !isAbsolute(path) && !path.startsWith("~") && !/^[a-z][a-z0-9+.-]*:\/\//i.test(path);
}

/**
 * Where the quoted literal at `at` ends, if it is there and says `path`; undefined otherwise, and the text is left
 * as it is (DuckDB then reads it from the working directory, and refuses it unless that is under a root).
 */
function literalEnd(text: string, at: number, path: string): number | undefined {
  const quote = text[at];
  if (quote !== "'" && quote !== '"') return undefined;
  let said = "";
  for (let index = at + 1; index < text.length; index++) {
    if (text[index] !== quote) said += text[index];
    else if (text[index + 1] === quote) {
      said += quote;
      index++;
    } else return said === path ? index + 1 : undefined;
  }
  return undefined;
}

function quoted(text: string, quote: string): string {
  return quote + text.replaceAll(quote, quote + quote) + quote;
}
