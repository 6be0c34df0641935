// Counts a child's requests in flight, and says when `idleMs` have passed with none: the child's idle timeout.
import type { Clock } from "../shared/clock.js";

/**
 * One timer, set when none is: when it fires it waits on for what is left since the last use, so a busy child
 * does no timer work per request. A request in flight when it fires sets it again once it ends.
 */
export class IdleWatch {
  private inFlight = 0;
  /** When the last request ended, or the session started. */
  private lastUsed = 0;
  private cancelTimer: (() => void) | undefined;

  /** `onIdle` runs once `idleMs` have passed without a request; `idleMs` 0 never. */
  constructor(
    private readonly idleMs: number,
    private readonly clock: Clock,
    private readonly onIdle: () => void,
  ) {}

  /** True while `idleMs` have passed since the last use and no request is in flight. */
  get expired(): boolean {
    return this.inFlight === 0 && this.clock.now() >= this.lastUsed + this.idleMs;
  }

  /** A session started: it is idle from now. */
  started(): void {
    this.lastUsed = this.clock.now();
    this.arm();
  }

  /** The session ended: there is nothing to time until the next one starts. */
  stopped(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  begin(): void {
    this.inFlight++;
  }

  /** A request ended: the child is idle from now if it was the last. Nothing more to do when there is no timeout. */
  end(): void {
    if (--this.inFlight > 0 || this.idleMs <= 0) return;
    this.lastUsed = this.clock.now();
    this.arm();
  }

  /** Runs `work` as use of the child: the idle timeout counts from its end. */
  async during<T>(work: () => Promise<T>): Promise<T> {
    this.begin();
    try {
      return await work();
    } finally {
      this.end();
    }
  }

  private arm(): void {
    if (this.idleMs <= 0 || this.cancelTimer || this.inFlight > 0) return;
    this.cancelTimer = this.clock.after(this.lastUsed + this.idleMs - this.clock.now(), () => {
      this.cancelTimer = undefined;
      if (this.inFlight > 0) return;
      if (this.expired) this.onIdle();
      else this.arm();
    });
  }
}
