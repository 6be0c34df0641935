// A query's answer as a model reads it: the columns with their types, the rows as JSON objects, and, when rows
// were left out (past max_rows or max_bytes), a note that says so and what to do.
import type { QueryResult } from "./session.js";

export interface AnswerLimits {
  maxRows: number;
  maxBytes: number;
}

export function answerOf({ statements, reader }: QueryResult, { maxRows, maxBytes }: AnswerLimits) {
  const types = reader.columnTypes().map((type) => type.toString());
  const columns = reader.columnNames().map((name, index) => ({ name, type: types[index] }));
  // JSON-safe values: big integers and decimals as strings, dates as ISO text.
  const read = reader.getRowObjectsJson();
  const rows = [];
  let bytes = 0;
  let cut: string | undefined;
  for (const row of read.slice(0, maxRows)) {
    bytes += JSON.stringify(row).length + 1;
    if (bytes > maxBytes) {
      cut = `rows past ${maxBytes} characters ([virtual.duckdb] max_bytes) were left out after ${rows.length}`;
      break;
    }
    rows.push(row);
  }
  if (!cut && (read.length > maxRows || !reader.done))
    cut = `only the first ${maxRows} rows are shown ([virtual.duckdb] max_rows); more were left out`;
  return {
    columns,
    rows,
    row_count: rows.length,
    ...(statements > 1 && { statements, note_statements: `the answer is the last of ${statements} statements` }),
    ...(cut && { truncated: true, note: `${cut}: add a LIMIT, a WHERE or an aggregate to see what you need` }),
  };
}
