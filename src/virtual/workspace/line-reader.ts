// Lines of an open file, read in chunks from its descriptor and each kept only as far as an answer shows it: a line
// of any length (one of 600 MB included) costs a bounded amount of memory, and the event loop turns between chunks.
import type { FileHandle } from "node:fs/promises";

/** Bytes read at a time. */
const CHUNK_BYTES = 64 * 1024;

export interface Line {
  /** The line without its end (`\n`, or `\r\n`), at most `keep` characters of it. */
  text: string;
  /** The whole line's length in characters (UTF-16 code units, as a string's length counts them). */
  length: number;
}

export interface Lines {
  lines: Line[];
  /** Lines in the file, when it was read to the end (no `more`); else lines read so far. */
  seen: number;
  /** Lines follow the last one taken. */
  more: boolean;
}

/** Lines `skip + 1` to `skip + take` of the open file, each cut to `keep` characters while it is read. */
export async function readLines(handle: FileHandle, skip: number, take: number, keep: number): Promise<Lines> {
  const buffer = Buffer.alloc(CHUNK_BYTES);
  // A character takes at most 3 bytes per UTF-16 unit; a few more finish one cut in the middle.
  const keepBytes = keep * 3 + 3;
  const lines: Line[] = [];
  let line = 0;
  let started = false;
  let kept: Buffer[] = [];
  let keptBytes = 0;
  let units = 0;
  let last = -1;
  let lineBytes = 0;
  const finish = (ended: boolean) => {
    const decoded = Buffer.concat(kept).toString("utf8");
    const crlf = ended && last === 13;
    // A line kept whole is measured as decoded (bytes that are not UTF-8 become one character each); a cut one by its count.
    const whole = lineBytes <= keepBytes;
    const text = (whole && crlf ? decoded.slice(0, -1) : decoded).slice(0, keep);
    const length = whole ? decoded.length - (crlf ? 1 : 0) : Math.max(units - (crlf ? 1 : 0), keep + 1);
    lines.push({ text, length });
    kept = [];
    keptBytes = 0;
    lineBytes = 0;
    units = 0;
  };
  for (let position = 0; ;) {
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    for (let start = 0; start < bytesRead;) {
      const newline = buffer.indexOf(10, start);
      const ended = newline !== -1 && newline < bytesRead;
      const end = ended ? newline : bytesRead;
      if (!started && (end > start || ended)) {
        started = true;
        if (line >= skip && lines.length === take) return { lines, seen: line, more: true };
      }
      if (line >= skip && end > start) {
        const piece = buffer.subarray(start, end);
        units += unitsIn(piece);
        lineBytes += piece.length;
        if (keptBytes < keepBytes) {
          const part = Buffer.from(piece.subarray(0, keepBytes - keptBytes));
          kept.push(part);
          keptBytes += part.length;
        }
        last = piece[piece.length - 1]!;
      }
      if (!ended) break;
      if (line >= skip) finish(true);
      line++;
      started = false;
      last = -1;
      start = newline + 1;
    }
  }
  if (started) {
    if (line >= skip) finish(false);
    line++;
  }
  return { lines, seen: line, more: false };
}

/** UTF-16 code units the UTF-8 bytes decode to: one per character, two for one beyond the BMP (a 4-byte sequence). */
function unitsIn(bytes: Buffer): number {
  let units = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) !== 0x80) units += byte >= 0xf0 ? 2 : 1;
  }
  return units;
}
