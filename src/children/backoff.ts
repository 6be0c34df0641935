// Delay before the next start of a child whose starts keep failing: 1 s, doubling, capped at 30 s.

export const BACKOFF_FIRST_MS = 1000;
export const BACKOFF_MAX_MS = 30_000;

export function backoffMs(failedStarts: number): number {
  if (failedStarts <= 0) return 0;
  return Math.min(BACKOFF_FIRST_MS * 2 ** (failedStarts - 1), BACKOFF_MAX_MS);
}
