// A Clock for tests that moves only when told: advance() fires every timer it passes, in due order.
import type { Clock } from "../../src/shared/clock.js";

interface Timer {
  at: number;
  fire: () => void;
}

export class ManualClock implements Clock {
  /** Kept in the order they fire: by due time, then by the order they were set. */
  private timers: Timer[] = [];

  constructor(private time = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.time;
  }

  after(ms: number, fire: () => void): () => void {
    const timer = { at: this.time + Math.max(0, ms), fire };
    const index = this.timers.findIndex((other) => other.at > timer.at);
    this.timers.splice(index === -1 ? this.timers.length : index, 0, timer);
    return () => {
      this.timers = this.timers.filter((other) => other !== timer);
    };
  }

  /**
   * Moves time on by `ms`, firing each timer that falls due on the way with now() at its due time. A timer
   * set by one that fires is fired too if it falls due within the same advance.
   */
  advance(ms: number): void {
    const until = this.time + ms;
    for (let next = this.timers[0]; next && next.at <= until; next = this.timers[0]) {
      this.timers.shift();
      this.time = next.at;
      next.fire();
    }
    this.time = until;
  }

  /** Timers set and neither fired nor called off. */
  get pending(): number {
    return this.timers.length;
  }
}
