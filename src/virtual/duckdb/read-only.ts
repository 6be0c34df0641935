// What a read-only duckdb child runs: queries only, calling only functions that read. DuckDB's own parser says
// what each statement is (json_serialize_sql, which parses and binds nothing), so a refused statement never runs.
import type { DuckDBConnection } from "@duckdb/node-api";
import { GaggleError } from "../../shared/errors.js";
import { nodesOf, type ParsedSql } from "./parsed-sql.js";

/**
 * Table functions a read-only query may call: file readers (confined to the roots by DuckDB), series, and the
 * catalog and metadata views. Left out: those that change DuckDB's state or write files (enable_logging,
 * enable_profiling, checkpoint), and those that run SQL given as text (query, query_table, json_execute_serialized_sql).
 */
const READING_TABLE_FUNCTIONS = new Set([
  "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json", "read_json_auto", "read_json_objects",
  "read_json_objects_auto", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects", "read_text", "read_blob",
  "sniff_csv", "glob", "parquet_metadata", "parquet_schema", "parquet_file_metadata", "parquet_kv_metadata",
  "parquet_full_metadata", "parquet_bloom_probe", "range", "generate_series", "unnest", "repeat", "repeat_row",
  "json_each", "json_tree", "summary", "histogram", "histogram_values", "pg_timezone_names", "icu_calendar_names",
  "duckdb_columns", "duckdb_constraints", "duckdb_databases", "duckdb_dependencies", "duckdb_functions",
  "duckdb_indexes", "duckdb_keywords", "duckdb_schemas", "duckdb_sequences", "duckdb_tables", "duckdb_types",
  "duckdb_views", "duckdb_settings", "duckdb_extensions", "duckdb_memory", "duckdb_optimizers",
  "pragma_table_info", "pragma_show", "pragma_storage_info", "pragma_database_size", "pragma_metadata_info",
  "pragma_collations", "pragma_version", "pragma_platform", "pragma_user_agent",
]); // prettier-ignore

/**
 * Built-in functions DuckDB marks as having side effects whose only effect is their own result (a fresh random
 * number or id, an error raised). The others it marks (setseed, nextval, write_log, sleep_ms) stay refused.
 */
const RESULT_ONLY = ["random", "uuid", "uuidv4", "uuidv7", "gen_random_uuid", "error", "current_query", "current_connection_id"];

/** Schemas an unqualified built-in is found in; a function named in another is not a built-in. */
const BUILT_IN_SCHEMAS = new Set(["", "main", "pg_catalog"]);

const QUERIES = "SELECT, FROM, WITH, VALUES, DESCRIBE, SHOW, SUMMARIZE";

const HINT =
  "a read-only duckdb child runs queries only: write CALL f(...) as SELECT * FROM f(...), PRAGMA table_info('t') as " +
  "DESCRIBE t; set [virtual.duckdb] read_write = true to allow statements that write (CREATE, INSERT, COPY ... TO)";

export class ReadOnlyCheck {
  private constructor(
    /** The scalar, aggregate and macro functions built into DuckDB that change nothing. */
    private readonly functions: ReadonlySet<string>,
  ) {}

  static async of(connection: DuckDBConnection): Promise<ReadOnlyCheck> {
    const reader = await connection.runAndReadAll(
      "SELECT function_name FROM duckdb_functions() WHERE internal AND function_type IN ('scalar', 'aggregate', 'macro') " +
        "GROUP BY function_name HAVING NOT bool_or(coalesce(has_side_effects, false))",
    );
    return new ReadOnlyCheck(new Set([...reader.getColumnsJson()[0]!.map(String), ...RESULT_ONLY]));
  }

  /**
   * Refuses `sql` unless each of its statements is a query (SELECT, FROM, WITH, VALUES, and DESCRIBE, SHOW and
   * SUMMARIZE, which DuckDB parses as queries) whose every function reads. A statement DuckDB cannot parse passes
   * here: running it fails with DuckDB's own syntax error.
   */
  async check(connection: DuckDBConnection, sql: string, parsed: ParsedSql): Promise<void> {
    if (parsed.kind === "statements") await this.refuseStatements(connection, sql);
    if (parsed.kind === "queries") parsed.statements.forEach((statement, index) => this.checkCalls(statement, index));
  }

  private checkCalls(statement: unknown, index: number): void {
    for (const call of callsIn(statement)) {
      const name = call.function_name.toLowerCase();
      const allowed =
        (call.catalog ?? "") === "" &&
        BUILT_IN_SCHEMAS.has(call.schema ?? "") &&
        (call.table ? READING_TABLE_FUNCTIONS.has(name) : this.functions.has(name));
      if (!allowed) {
        const kind = call.table ? "table function" : "function";
        throw new GaggleError(
          "PERMISSION_DENIED",
          `statement ${index + 1} calls the ${kind} ${qualifiedName(call)}, which a read-only duckdb child does not run: it may change DuckDB's state or write files`,
          { hint: `call only DuckDB's built-in functions that read; ${HINT}` },
        );
      }
    }
  }

  /**
   * Refuses SQL holding a statement that is not a query. Which one, and of what type, is not named: DuckDB says
   * that only by preparing a statement, and preparing binds it, which for some (EXPORT DATABASE) writes files.
   */
  private async refuseStatements(connection: DuckDBConnection, sql: string): Promise<never> {
    const { count } = await connection.extractStatements(sql);
    const which = count > 1 ? `one of its ${count} statements is not a query` : "it is not a query";
    throw new GaggleError("PERMISSION_DENIED", `${which}; a read-only duckdb child runs only queries (${QUERIES})`, { hint: HINT });
  }
}

interface FunctionCall {
  function_name: string;
  schema?: string;
  catalog?: string;
  table: boolean;
}

function qualifiedName({ function_name, schema, catalog }: FunctionCall): string {
  return [catalog, schema, function_name].filter(Boolean).join(".");
}

/** Every function a parsed statement calls, in table position (`FROM f(...)`) or in an expression. */
function callsIn(statement: unknown): FunctionCall[] {
  const calls: FunctionCall[] = [];
  // A table function's call node is also reached as a node of its own: it is taken once, in table position.
  const tableCalls = new Set<unknown>();
  for (const node of nodesOf(statement)) {
    if (node.type === "TABLE_FUNCTION" && isCall(node.function)) {
      calls.push({ ...node.function, table: true });
      tableCalls.add(node.function);
    } else if (node.class === "FUNCTION" && isCall(node) && !tableCalls.has(node)) {
      calls.push({ ...node, table: false });
    }
  }
  return calls;
}

function isCall(node: unknown): node is { function_name: string; schema?: string; catalog?: string; children?: unknown } {
  return typeof node === "object" && node !== null && typeof (node as { function_name?: unknown }).function_name === "string";
}
