// setTimeout's range: a delay past it fires at once, so every long wait in gaggle is capped here instead.

/** The longest delay setTimeout takes: 2^31-1 ms, about 24.8 days. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a setTimeout delay: never negative, and a longer wait waits MAX_TIMER_MS instead of not at all. */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_TIMER_MS);
}
