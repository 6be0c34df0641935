// Reads the first and last lines of a log without reading the whole file: forward from the start, backward from the end, in blocks.
import type { FileHandle } from "node:fs/promises";

export interface LogView {
  head: string[];
  tail: string[];
  /** Lines between head and tail. */
  omitted: number;
}

/** What the caller knows about the file already (from OutputLog): the view never has to count lines itself. */
export interface LogExtent {
  bytes: number;
  lines: number;
}

const BLOCK = 64 * 1024;
/** At most this much is read from each end, however long its lines are. */
const SCAN_LIMIT = 1024 * 1024;
/** Longer lines are cut in a view, and say how much was cut. */
export const MAX_LINE_CHARS = 2000;
const NEWLINE = 0x0a;

/** Opens a log to read, failing in the owner's words where the file is gone (see ManagedProcess.openLog). */
export type LogOpener = () => Promise<FileHandle>;

/**
 * `openLog`: how to open the log. `extent` is read once, when called: a log still being written shows what it held
 * then. The file is opened once, before any read: a log deleted after that still reads whole.
 */
export async function readView(openLog: LogOpener, extent: LogExtent, headLines: number, tailLines: number): Promise<LogView> {
  const { bytes, lines } = extent;
  if (bytes === 0 || (headLines === 0 && tailLines === 0)) return { head: [], tail: [], omitted: lines };
  const fd = await openLog();
  try {
    // A short file with a head to show is read whole; the last lines alone are read from the end, whatever the size.
    if (headLines > 0 && bytes <= 2 * SCAN_LIMIT) {
      const all = splitLines(await readRange(fd, 0, bytes));
      const head = all.slice(0, headLines);
      const tail = all.slice(Math.max(head.length, all.length - tailLines));
      return { head: head.map(cut), tail: tail.map(cut), omitted: all.length - head.length - tail.length };
    }
    // Each end reads at most SCAN_LIMIT; with a head, the file is longer than both together, so they never overlap.
    const head = headLines > 0 ? await readHead(fd, headLines) : [];
    const tail = tailLines > 0 ? await readTail(fd, bytes, tailLines) : [];
    return { head: head.map(cut), tail: tail.map(cut), omitted: Math.max(lines - head.length - tail.length, 0) };
  } finally {
    await fd.close();
  }
}

/** The first `count` lines; when the scan limit cuts a line, it ends with "…". */
async function readHead(fd: FileHandle, count: number): Promise<string[]> {
  const blocks: Buffer[] = [];
  let offset = 0;
  let found = 0;
  while (found < count && offset < SCAN_LIMIT) {
    const block = await readRange(fd, offset, BLOCK);
    if (block.length === 0) break;
    blocks.push(block);
    offset += block.length;
    found += countNewlines(block);
  }
  const lines = splitLines(Buffer.concat(blocks));
  if (found < count && lines.length > 0) lines[lines.length - 1] += "…";
  return lines.slice(0, count);
}

/** The last `count` lines of the first `size` bytes; when the scan limit cuts a line, it starts with "…". */
async function readTail(fd: FileHandle, size: number, count: number): Promise<string[]> {
  const blocks: Buffer[] = [];
  let start = size;
  // A newline ending the file closes the last line; it does not start another.
  let found = (await readRange(fd, size - 1, 1))[0] === NEWLINE ? -1 : 0;
  while (found < count && start > 0 && size - start < SCAN_LIMIT) {
    const from = Math.max(start - BLOCK, 0);
    const block = await readRange(fd, from, start - from);
    blocks.unshift(block);
    start = from;
    found += countNewlines(block);
  }
  const lines = splitLines(Buffer.concat(blocks));
  const tail = lines.slice(-count);
  if (start > 0 && found < count && tail.length > 0) tail[0] = `…${tail[0]}`;
  return tail;
}

async function readRange(fd: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const { bytesRead: n } = await fd.read(buffer, read, length - read, position + read);
    if (n === 0) break;
    read += n;
  }
  return buffer.subarray(0, read);
}

/** Lines without their terminators; a final newline does not make an empty last line. */
function splitLines(buffer: Buffer): string[] {
  if (buffer.length === 0) return [];
  const text = buffer.toString("utf8");
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

function countNewlines(buffer: Buffer): number {
  let count = 0;
  for (let at = buffer.indexOf(NEWLINE); at !== -1; at = buffer.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

function cut(line: string): string {
  return line.length <= MAX_LINE_CHARS ? line : `${line.slice(0, MAX_LINE_CHARS)}… [${line.length - MAX_LINE_CHARS} more characters]`;
}

/** The view as text: head, a line saying how many lines lie between, tail. */
export function viewText(view: LogView): string {
  const gap = view.omitted > 0 && (view.head.length > 0 || view.tail.length > 0) ? [`[... ${view.omitted} lines omitted ...]`] : [];
  return [...view.head, ...gap, ...view.tail].join("\n");
}
