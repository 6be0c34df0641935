// SQL as DuckDB's own parser reads it (json_serialize_sql): the syntax tree of each statement, with each node's
// offset in the text. Parsing binds and runs nothing.
import type { DuckDBConnection } from "@duckdb/node-api";

export type ParsedSql =
  /** Every statement is a query (SELECT, FROM, WITH, VALUES, DESCRIBE, SHOW, SUMMARIZE): their trees. */
  | { kind: "queries"; statements: unknown[] }
  /**
   * At least one statement is not a query (DuckDB serializes only queries), or DuckDB could not serialize it for
   * another reason: what it holds is not known.
   */
  | { kind: "statements" }
  /** DuckDB cannot parse it: running it fails with DuckDB's own syntax error, before anything runs. */
  | { kind: "unparsed" };

export async function parseSql(connection: DuckDBConnection, sql: string): Promise<ParsedSql> {
  const reader = await connection.runAndReadAll("SELECT json_serialize_sql($sql::VARCHAR)", { sql });
  const parsed = JSON.parse(String(reader.getColumnsJson()[0]![0])) as { error: boolean; error_type?: string; statements: unknown[] };
  if (!parsed.error) return { kind: "queries", statements: parsed.statements };
  return parsed.error_type === "parser" ? { kind: "unparsed" } : { kind: "statements" };
}

/** Every object node of a tree, nesting of any depth, without recursion. */
export function* nodesOf(tree: unknown): Generator<Record<string, unknown>> {
  const pending: unknown[] = [tree];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...node);
    else if (typeof node === "object" && node !== null) {
      yield node as Record<string, unknown>;
      pending.push(...Object.values(node));
    }
  }
}
