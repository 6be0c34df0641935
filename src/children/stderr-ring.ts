// Bounded ring buffer of a child's stderr lines: the tail shown in status and in failure messages.

export const STDERR_LINES_KEPT = 200;

export class StderrRing {
  private readonly lines: string[] = [];
  private partial = "";

  constructor(private readonly capacity = STDERR_LINES_KEPT) {}

  /** Accepts raw chunks; a line is complete at its newline, and a partial line is kept until then. */
  push(chunk: string): string[] {
    const parts = (this.partial + chunk).split(/\r?\n/);
    this.partial = parts.pop() ?? "";
    for (const line of parts) this.keep(line);
    return parts;
  }

  /** The last `count` lines, the pending partial line included. */
  tail(count = this.capacity): string[] {
    const all = this.partial ? [...this.lines, this.partial] : this.lines;
    return all.slice(-count);
  }

  private keep(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.capacity) this.lines.shift();
  }
}
