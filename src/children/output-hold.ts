// Whether what a child sends may be read now: held while a client it serves is not reading what gaggle sends it,
// so that the child's output waits in the child (a full pipe, a full TCP window) instead of in gaggle's memory.

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
 * `inner`, with the body of every response from `origin` read only while `hold` lets it: each chunk is pulled
 * from the network when the reader asks for it and the output is not held, so a held stream leaves what the
 * child sends in the socket, and TCP stops the child. Responses from elsewhere (an authorization server) are
 * left alone.
 */
export function heldFetch(inner: Fetch, origin: string, hold: OutputHold): Fetch {
  return async (url, init) => {
    const response = await inner(url, init);
    // Only answers are held: a redirect or a refusal is small, and read by the transport as it comes.
    if (!response.ok || !response.body || new URL(url).origin !== origin) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          await hold.whenReadable();
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      // Nothing is read ahead of the reader: a held stream holds at the socket.
      { highWaterMark: 0 },
    );
    const held = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    // The URL a fetch reached is read by the transports (the SSE transport resolves its endpoint against it).
    Object.defineProperty(held, "url", { value: response.url });
    return held;
  };
}
