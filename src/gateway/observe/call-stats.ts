// What the status page says of each child's calls: how many, how many failed, the last failure, and p50/p95 latency.

/** Latencies kept per child: the percentiles are those of its latest calls. */
const WINDOW = 512;

/** A child's latest failed call; `principal` made it, and only a viewer who may see that principal's calls reads its message. */
export interface LastError {
  type: string;
  message: string | undefined;
  at: string;
  principal: string;
}

interface ChildCalls {
  calls: number;
  errors: number;
  lastError: LastError | null;
  /** A ring of the latest durations, in milliseconds. */
  durations: Float64Array;
  next: number;
}

export interface CallSummary {
  calls: number;
  errors: number;
  last_error: ChildCalls["lastError"];
  p50_ms: number | null;
  p95_ms: number | null;
}

export class CallStats {
  private readonly children = new Map<string, ChildCalls>();

  /** `principal`: who made the call. */
  record(child: string, ms: number, error: { type: string; message: string | undefined } | undefined, principal: string): void {
    let entry = this.children.get(child);
    if (!entry) {
      entry = { calls: 0, errors: 0, lastError: null, durations: new Float64Array(WINDOW), next: 0 };
      this.children.set(child, entry);
    }
    entry.durations[entry.next % WINDOW] = ms;
    entry.next++;
    entry.calls++;
    if (error) {
      entry.errors++;
      entry.lastError = { ...error, at: new Date().toISOString(), principal };
    }
  }

  summary(child: string): CallSummary {
    const entry = this.children.get(child);
    if (!entry) return { calls: 0, errors: 0, last_error: null, p50_ms: null, p95_ms: null };
    const sorted = entry.durations.slice(0, Math.min(entry.next, WINDOW)).sort();
    return {
      calls: entry.calls,
      errors: entry.errors,
      last_error: entry.lastError,
      p50_ms: percentile(sorted, 0.5),
      p95_ms: percentile(sorted, 0.95),
    };
  }
}

/** The nearest-rank percentile of sorted values, rounded to a tenth of a millisecond. */
export function percentile(sorted: ArrayLike<number>, rank: number): number | null {
  if (sorted.length === 0) return null;
  const value = sorted[Math.min(sorted.length - 1, Math.ceil(rank * sorted.length) - 1)]!;
  return Math.round(value * 10) / 10;
}
