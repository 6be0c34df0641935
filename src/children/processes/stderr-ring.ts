// Bounded ring buffer of a child's stderr lines: the tail shown in status and in failure messages.
import { LineSplitter } from "../../shared/stream-lines.js";

export const STDERR_LINES_KEPT = 200;
/** Longer lines are cut: the ring is bounded in bytes too, however a child writes. */
export const STDERR_LINE_CHARS = 4096;

export class StderrRing {
  private readonly lines: string[] = [];
  private readonly splitter = new LineSplitter(STDERR_LINE_CHARS, (line) => this.keep(line));
  private fresh: string[] = [];
  /** Lines kept so far, over the child's every run: a mark `since` counts from. */
  private kept = 0;

  constructor(private readonly capacity = STDERR_LINES_KEPT) {}

  /** Accepts raw chunks; returns the lines they completed. A partial line is kept until its newline. */
  push(chunk: string): string[] {
    this.fresh = [];
    this.splitter.push(chunk);
    return this.fresh;
  }

  /** The last `count` lines, the pending partial line included. */
  tail(count = this.capacity): string[] {
    const partial = this.splitter.pending;
    const all = partial ? [...this.lines, partial] : this.lines;
    return all.slice(-count);
  }

  /** Where the lines written from now on begin: for `since`. */
  mark(): number {
    return this.kept;
  }

  /**
   * The lines written since `mark` (as many as the ring still holds), the pending partial line included: what one
   * run of the child wrote, without an earlier run's.
   */
  since(mark: number): string[] {
    const count = this.kept - mark;
    const partial = this.splitter.pending;
    const lines = count > 0 ? this.lines.slice(-count) : [];
    return partial ? [...lines, partial] : lines;
  }

  private keep(line: string): void {
    this.kept++;
    this.fresh.push(line);
    this.lines.push(line);
    if (this.lines.length > this.capacity) this.lines.shift();
  }
}
