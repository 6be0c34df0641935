// Time as gaggle's timed behaviour reads it (back-off, idle timeouts), injectable so tests run on fake time.
import { timerDelay } from "./timer-delay.js";

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fire` after `ms` (never keeping the process alive for it); returns the way to call it off. */
  after(ms: number, fire: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after: (ms, fire) => {
    const timer = setTimeout(fire, timerDelay(ms)).unref();
    return () => clearTimeout(timer);
  },
};
