// What a stdio child wrote to its stdout that is not JSON-RPC: each such line is ignored, counted, and the last few
// kept with why, for the child's status.
import type { StdoutNoiseView } from "../child.js";

/** Lines kept, newest last; the count goes on past them. */
const RECENT_KEPT = 5;
/** An ignored line is kept this long at most: enough to recognise it. */
const LINE_CHARS = 200;

export class StdoutNoise {
  private lines = 0;
  private readonly recent: StdoutNoiseView["recent"] = [];

  note(reason: string, line: string): void {
    this.lines++;
    this.recent.push({ reason, line: line.slice(0, LINE_CHARS) });
    if (this.recent.length > RECENT_KEPT) this.recent.shift();
  }

  view(): StdoutNoiseView {
    return { lines: this.lines, recent: [...this.recent] };
  }
}
