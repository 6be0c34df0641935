// Splits a text stream into lines, holding at most one partial line, and never more than `maxChars` of it.

/**
 * A line longer than `maxChars` is emitted cut, with a note, and the rest of it skipped up to its newline,
 * so a process that writes without newlines cannot grow gaggle's memory. A trailing `\r` is dropped.
 */
export class LineSplitter {
  private partial = "";
  private skipping = false;

  constructor(
    private readonly maxChars: number,
    private readonly emit: (line: string) => void,
  ) {}

  /** The line being written, not yet ended by a newline. */
  get pending(): string {
    return this.skipping ? "" : this.partial;
  }

  push(chunk: string): void {
    let start = 0;
    let newline: number;
    while ((newline = chunk.indexOf("\n", start)) !== -1) {
      if (this.skipping) this.skipping = false;
      else this.emit(withoutCarriageReturn(this.partial === "" ? chunk.slice(start, newline) : this.partial + chunk.slice(start, newline)));
      this.partial = "";
      start = newline + 1;
    }
    if (this.skipping || start === chunk.length) return;
    this.partial += start === 0 ? chunk : chunk.slice(start);
    if (this.partial.length > this.maxChars) {
      this.emit(`${this.partial.slice(0, this.maxChars)} …[line cut at ${this.maxChars} characters]`);
      this.partial = "";
      this.skipping = true;
    }
  }

  /** Emits the partial line, if any: for the end of the stream. */
  flush(): void {
    if (this.partial !== "" && !this.skipping) this.emit(withoutCarriageReturn(this.partial));
    this.partial = "";
    this.skipping = false;
  }
}

function withoutCarriageReturn(line: string): string {
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}
