// One column of a result chunk as JSON values, text and blob cells read only up to a bound: a cell of hundreds of
// megabytes costs gaggle its first bytes, not a copy of it in every form it passes through.
import type { DuckDBDataChunk, DuckDBType, Json } from "@duckdb/node-api";
import type { DuckDb } from "./database.js";

/**
 * The part of DuckDB's C API (@duckdb/node-bindings, under @duckdb/node-api) that reads a string cell's length
 * and a prefix of its bytes; @duckdb/node-api reads only whole strings. A test pins what it reads.
 */
export interface StringAccess {
  data_chunk_get_vector(chunk: DuckDBDataChunk["chunk"], column: number): object;
  vector_get_data(vector: object, byteCount: number): Uint8Array;
  vector_get_validity(vector: object, byteCount: number): Uint8Array | null;
  validity_row_is_valid(validity: Uint8Array | null, row: number): boolean;
  get_data_from_pointer(buffer: ArrayBufferLike, pointerOffset: number, byteCount: number): Uint8Array;
}

/** DuckDB's string_t: 16 bytes, a 4-byte length, then up to 12 bytes inline or a pointer at offset 8. */
const STRING_T = 16;
const INLINE = 12;

export interface Cell {
  value: Json;
  /** The value was longer than the bound, and cut to it. */
  cut: boolean;
}

const utf8 = new TextDecoder();

/** A result chunk's cells, each read when asked for: a VARCHAR (JSON included) or BLOB cell past `maxCellBytes` is cut. */
export class ChunkCells {
  private readonly columns: Array<(row: number) => Cell>;

  constructor(
    private readonly duckdb: DuckDb,
    chunk: DuckDBDataChunk,
    types: DuckDBType[],
    private readonly maxCellBytes: number,
  ) {
    const { VARCHAR, BLOB } = duckdb.api.DuckDBTypeId;
    this.columns = types.map((type, column) =>
      type.typeId === VARCHAR || type.typeId === BLOB ? this.strings(chunk, column, type.typeId === BLOB) : this.others(chunk, column, type),
    );
  }

  cell(column: number, row: number): Cell {
    return this.columns[column]!(row);
  }

  private others(chunk: DuckDBDataChunk, column: number, type: DuckDBType): (row: number) => Cell {
    const vector = chunk.getColumnVector(column);
    const convert = this.duckdb.api.JsonDuckDBValueConverter;
    return (row) => {
      const value = vector.getItem(row);
      return { value: value === null ? null : convert(value, type, convert), cut: false };
    };
  }

  private strings(chunk: DuckDBDataChunk, column: number, blob: boolean): (row: number) => Cell {
    const access = this.duckdb.strings;
    const rows = chunk.rowCount;
    const vector = access.data_chunk_get_vector(chunk.chunk, column);
    const data = access.vector_get_data(vector, rows * STRING_T);
    const validity = access.vector_get_validity(vector, Math.ceil(rows / 64) * 8);
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    return (row) => {
      if (!access.validity_row_is_valid(validity, row)) return { value: null, cut: false };
      const at = row * STRING_T;
      const length = view.getUint32(at, true);
      const take = Math.min(length, this.maxCellBytes);
      const bytes =
        length <= INLINE
          ? new Uint8Array(data.buffer, data.byteOffset + at + 4, take)
          : access.get_data_from_pointer(data.buffer, data.byteOffset + at + 8, take);
      const cut = take < length;
      return { value: blob ? new this.duckdb.api.DuckDBBlobValue(bytes).toString() : textOf(bytes, cut), cut };
    };
  }
}

/** UTF-8 text; a cut that split a character drops its start rather than end in a replacement character. */
function textOf(bytes: Uint8Array, wasCut: boolean): string {
  if (!wasCut) return utf8.decode(bytes);
  let end = bytes.length;
  // Back up over continuation bytes (10xxxxxx) to the lead byte of the last character, and leave that character out.
  let back = end - 1;
  while (back > 0 && back > end - 4 && (bytes[back]! & 0xc0) === 0x80) back--;
  const lead = bytes[back]!;
  const size = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (back + size > end) end = back;
  return utf8.decode(bytes.subarray(0, end));
}
