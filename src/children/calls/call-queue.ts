// A child's calls: at most `concurrency` at the child at once; the rest wait their turn in a p-queue.
import PQueue from "p-queue";
import type { Cancellation } from "./cancellation.js";

/**
 * A call that finds a free slot and nobody waiting starts at once; only calls that must wait go through the
 * p-queue, which keeps them in order and starts each as a slot frees. p-queue's bookkeeping and allocations
 * per call are a measurable share of gaggle's CPU per call (see `npm run bench`), on the path where most calls
 * never wait.
 *
 * The p-queue only ever sees the slots that calls started at once leave free: its concurrency is set to
 * them (and it is paused while there are none) before a call is added to it, and again whenever such a
 * call ends while others wait. A call starts at once only while nothing waits, so no call overtakes
 * another.
 */
export class CallQueue {
  private readonly waitingCalls: PQueue;
  /** Calls started at once, still running. */
  private direct = 0;

  constructor(readonly concurrency: number) {
    this.waitingCalls = new PQueue({ concurrency });
  }

  /** Calls at the child now. */
  get running(): number {
    return this.direct + this.waitingCalls.pending;
  }

  /** Calls waiting for a slot. */
  get waiting(): number {
    return this.waitingCalls.size;
  }

  /** A call run now starts at once: a slot is free and nobody waits. */
  get hasRoom(): boolean {
    return this.waitingCalls.size === 0 && this.running < this.concurrency;
  }

  /** Runs `call` when a slot is free. A call cancelled while it waits leaves the line and rejects with the reason. */
  run<T>(call: () => Promise<T>, cancel?: Cancellation): Promise<T> {
    if (this.hasRoom) return this.runNow(call);
    this.fitWaitingCalls();
    return this.waitingCalls.add(call, cancel ? { signal: cancel.signal } : {});
  }

  /**
   * Resolves once a slot is free, and holds it until the returned function is called (calling it again does
   * nothing). A call cancelled while it waits leaves the line and rejects with the reason.
   */
  async admit(cancel?: Cancellation): Promise<() => void> {
    let free!: () => void;
    const held = new Promise<void>((resolve) => (free = resolve));
    await new Promise<void>((admitted, refused) => {
      this.run(() => {
        admitted();
        return held;
      }, cancel).catch(refused);
    });
    return free;
  }

  private async runNow<T>(call: () => Promise<T>): Promise<T> {
    this.direct++;
    try {
      return await call();
    } finally {
      this.direct--;
      if (this.waitingCalls.size > 0 || this.waitingCalls.isPaused) this.fitWaitingCalls();
    }
  }

  /** Gives the p-queue exactly the slots that calls started at once leave free. */
  private fitWaitingCalls(): void {
    const free = this.concurrency - this.direct;
    if (free < 1) {
      this.waitingCalls.pause();
      return;
    }
    if (this.waitingCalls.concurrency !== free) this.waitingCalls.concurrency = free;
    this.waitingCalls.start();
  }
}
