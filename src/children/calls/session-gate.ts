// Lets calls of one client run together at a child, but never calls of two clients at once.
//
// A child's sampling, elicitation and roots requests and its log messages carry nothing that names the
// call they belong to. While every call in flight at a child comes from one client, they can only be
// that client's, so routing them is exact. Waiting calls are admitted in order, so a busy client
// cannot starve another.

import { holding } from "./call-hold.js";
import { inLine } from "./call-turn.js";
import { cancelledError, type Cancellation } from "./cancellation.js";
import type { CallContext } from "../child.js";

interface Waiter {
  session: string;
  admit: () => void;
}

export class SessionGate {
  /**
   * Runs `call` once its client may be at the child. Waiting here is waiting for a turn, as in the router's
   * queue: it uses up the call's time. A call that may pause for its client gives its place back meanwhile.
   * Calls without a client session (one-shot commands) are one client.
   */
  async through<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    const caller = ctx.caller?.sessionId ?? "local";
    const wait = () => inLine(ctx.turn, ctx.cancel, (cancel) => this.enter(caller, cancel));
    if (ctx.holds) return holding(async () => this.tryEnter(caller) ?? (await wait()), ctx.holds, call);
    const leave = this.tryEnter(caller) ?? (await wait());
    try {
      return await call();
    } finally {
      leave();
    }
  }

  private owner: string | undefined;
  private inside = 0;
  private readonly waiting: Waiter[] = [];

  /** Admits the call now if it may run now, or returns undefined: then it must wait with `enter`. */
  tryEnter(session: string): (() => void) | undefined {
    if (this.waiting.length > 0 || (this.inside > 0 && this.owner !== session)) return undefined;
    this.take(session);
    return this.leaver();
  }

  /**
   * Resolves once the call may run; the returned function must be called when it ends. A call cancelled while
   * it waits leaves the line and rejects with the cancellation's reason.
   */
  async enter(session: string, cancel?: Cancellation): Promise<() => void> {
    const now = this.tryEnter(session);
    if (now) return now;
    await new Promise<void>((admit, reject) => {
      const waiter: Waiter = { session, admit };
      this.waiting.push(waiter);
      const stopListening = cancel?.onAbort((reason) => {
        const at = this.waiting.indexOf(waiter);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(cancelledError(reason));
      });
      waiter.admit = () => {
        stopListening?.();
        admit();
      };
    });
    return this.leaver();
  }

  private leaver(): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inside--;
      if (this.inside === 0) this.admitNext();
    };
  }

  private take(session: string): void {
    this.owner = session;
    this.inside++;
  }

  /** The next client in line gets the child, with every call of its that waits right behind it. */
  private admitNext(): void {
    const next = this.waiting[0];
    if (!next) return;
    while (this.waiting[0]?.session === next.session) {
      const waiter = this.waiting.shift()!;
      this.take(waiter.session);
      waiter.admit();
    }
  }
}
