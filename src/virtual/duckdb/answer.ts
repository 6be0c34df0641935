// A query's answer as a model reads it: the columns with their types, the rows as JSON objects, and, when rows
// were left out (past max_rows or max_bytes) or cells cut (past max_cell_bytes), a note that says so and what to do.
// Rows are read chunk by chunk, and only as many as the answer can hold.
import type { DuckDBResult, Json } from "@duckdb/node-api";
import { ChunkCells } from "./cells.js";
import type { DuckDb } from "./database.js";

export interface AnswerLimits {
  maxRows: number;
  maxBytes: number;
  maxCellBytes: number;
}

export type Answer = Awaited<ReturnType<typeof readAnswer>>;

/** Reads `result`, the last of `statements`, up to the limits; must finish before the connection runs anything else. */
export async function readAnswer(duckdb: DuckDb, result: DuckDBResult, statements: number, limits: AnswerLimits) {
  const { maxRows, maxBytes, maxCellBytes } = limits;
  const names = result.columnNames();
  const types = result.columnTypes();
  const columns = names.map((name, index) => ({ name, type: types[index]!.toString() }));
  const rows: Record<string, Json>[] = [];
  let bytes = 0;
  let cellsCut = 0;
  let cut: string | undefined;
  reading: for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    try {
      const cells = new ChunkCells(duckdb, chunk, types, maxCellBytes);
      for (let index = 0; index < chunk.rowCount; index++) {
        if (rows.length === maxRows) {
          cut = `only the first ${maxRows} rows are shown ([virtual.duckdb] max_rows); more were left out`;
          break reading;
        }
        const row: Record<string, Json> = {};
        let rowCut = 0;
        names.forEach((name, column) => {
          const cell = cells.cell(column, index);
          row[name] = cell.value;
          if (cell.cut) rowCut++;
        });
        bytes += JSON.stringify(row).length + 1;
        if (bytes > maxBytes) {
          cut = `rows past ${maxBytes} characters ([virtual.duckdb] max_bytes) were left out after ${rows.length}`;
          break reading;
        }
        rows.push(row);
        cellsCut += rowCut;
      }
    } finally {
      // Frees the chunk's string data now: DuckDB would free it only when the garbage collector finalizes the
      // chunk, which nothing prompts, since the collector does not see native memory.
      chunk.reset();
    }
  }
  return {
    columns,
    rows,
    row_count: rows.length,
    ...(statements > 1 && { statements, note_statements: `the answer is the last of ${statements} statements` }),
    ...(cut && { truncated: true, note: `${cut}: add a LIMIT, a WHERE or an aggregate to see what you need` }),
    ...(cellsCut > 0 && {
      cells_cut: cellsCut,
      note_cells: `text and blob values longer than ${maxCellBytes} bytes ([virtual.duckdb] max_cell_bytes) were cut to it: select a substring() to see another part`,
    }),
  };
}
