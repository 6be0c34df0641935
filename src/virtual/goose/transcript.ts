// Owns a gosling's transcript: lines numbered from its start, held under max_output_bytes by dropping the oldest.

export interface TranscriptPage {
  lines: string[];
  /** 0-based number of the first line returned. */
  start: number;
  /** One past the last line returned. */
  end: number;
  /** Lines written since the gosling started, dropped ones included. */
  total: number;
  /** Number of the oldest line still kept (0 unless lines were dropped). */
  firstKept: number;
}

const CUT_MARK = " …[line cut: over max_output_bytes]";

/**
 * Line numbers never change: dropping old lines moves `firstKept`, so an offset a caller was given
 * still points at the same line. The last line may be "open": streamed text keeps extending it.
 */
export class Transcript {
  private lines: string[] = [];
  /** Index in `lines` of the oldest kept line; the array is compacted now and then, not on every drop. */
  private head = 0;
  private first = 0;
  private bytes = 0;
  private droppedBytes = 0;
  private open = false;

  constructor(readonly maxBytes: number) {}

  get total(): number {
    return this.first + this.lines.length - this.head;
  }

  get firstKept(): number {
    return this.first;
  }

  get droppedBytesCount(): number {
    return this.droppedBytes;
  }

  /** Bytes of the lines kept, a newline counted after each. */
  get size(): number {
    return this.bytes;
  }

  /** Adds whole lines; text with "\n" in it becomes several lines. Closes an open line first. */
  line(text: string): void {
    this.open = false;
    for (const line of text.split("\n")) this.push(line);
  }

  /** Streamed text: continues the open line, and "\n" starts new ones. The last line stays open. */
  stream(text: string): void {
    const parts = text.split("\n");
    const [first, ...rest] = parts;
    if (this.open && this.lines.length > this.head) this.extendLast(first!);
    else this.push(first!);
    for (const part of rest) this.push(part);
    this.open = true;
  }

  /** Ends the open line, so the next streamed text starts a line of its own. */
  close(): void {
    this.open = false;
  }

  page(offset: number, limit: number): TranscriptPage {
    const total = this.total;
    const start = Math.min(Math.max(offset, this.first), total);
    const end = Math.min(start + limit, total);
    const from = this.head + (start - this.first);
    return { lines: this.lines.slice(from, from + (end - start)), start, end, total, firstKept: this.first };
  }

  /** The last `count` lines kept. */
  tail(count: number): string[] {
    return this.lines.slice(Math.max(this.head, this.lines.length - count));
  }

  private push(raw: string): void {
    const line = this.fit(raw);
    this.lines.push(line);
    this.bytes += Buffer.byteLength(line) + 1;
    this.dropOldest();
  }

  private extendLast(text: string): void {
    const index = this.lines.length - 1;
    const before = this.lines[index]!;
    if (before.endsWith(CUT_MARK)) return;
    const after = this.fit(before + text);
    this.lines[index] = after;
    this.bytes += Buffer.byteLength(after) - Buffer.byteLength(before);
    this.dropOldest();
  }

  /** One line alone may not exceed the cap: it is cut, and says so. */
  private fit(line: string): string {
    if (Buffer.byteLength(line) + 1 <= this.maxBytes) return line;
    const room = Math.max(0, this.maxBytes - Buffer.byteLength(CUT_MARK) - 1);
    return (
      Buffer.from(line)
        .subarray(0, room)
        .toString("utf8")
        .replace(/\uFFFD$/, "") + CUT_MARK
    );
  }

  private dropOldest(): void {
    while (this.bytes > this.maxBytes && this.lines.length - this.head > 1) {
      const dropped = Buffer.byteLength(this.lines[this.head]!) + 1;
      this.bytes -= dropped;
      this.droppedBytes += dropped;
      this.head++;
      this.first++;
    }
    if (this.head > 1024 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
  }
}
