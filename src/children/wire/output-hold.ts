// Whether what a child sends may be read now: held while a client it serves is not reading what gaggle sends it,
// so that the child's output waits in the child (a full pipe, a full TCP window) instead of in gaggle's memory.
import { requestSignal, throughBody } from "./response-body.js";

export interface OutputHoldOptions {
  /** Asked before each read: true holds the output until `readAgain` finds it false. */
  held(): boolean;
  /** The output began (true) or ended (false) being held. */
  onHold(held: boolean): void;
}

export class OutputHold {
  private holding = false;
  private ended = false;
  private waiters: Array<() => void> = [];

  constructor(private readonly options: OutputHoldOptions) {}

  /** Undefined when the output may be read now; else a promise that settles once it may. */
  whenReadable(): Promise<void> | undefined {
    if (this.ended || !this.options.held()) return undefined;
    if (!this.holding) {
      this.holding = true;
      this.options.onHold(true);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Lets reading go on, unless what held the output still holds it; called whenever that may have changed. */
  readAgain(): void {
    if (!this.holding || (!this.ended && this.options.held())) return;
    this.holding = false;
    this.options.onHold(false);
    const waiters = this.waiters;
    this.waiters = [];
    for (const resume of waiters) resume();
  }

  /** The session is over: nothing is held any more, so that its streams read on to their end or their failure. */
  end(): void {
    this.ended = true;
    this.readAgain();
  }
}

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * `inner`, for one child's transport. The body of every answer from `origin` is read only while `hold` lets it:
 * each chunk is pulled from the network when the reader asks for it and the output is not held, so a held stream
 * leaves what the child sends in the socket, and TCP stops the child. Responses from elsewhere (an authorization
 * server), and refusals, are read as they come. Each request gets a signal of its own (see requestSignal).
 */
export function heldFetch(inner: Fetch, origin: string, hold: OutputHold): Fetch {
  return async (url, init) => {
    const { signal, release } = requestSignal(init?.signal);
    let response: Response;
    try {
      response = await inner(url, signal === init?.signal ? init : { ...init, signal });
    } catch (error) {
      release();
      throw error;
    }
    const held = response.ok && new URL(url).origin === origin;
    return throughBody(response, { ...(held && { before: () => hold.whenReadable() }), done: release });
  };
}
