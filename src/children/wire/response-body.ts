// A fetch Response whose body gaggle reads through a stream of its own: each chunk is pulled from the network only
// when the reader asks for it (and, with `before`, once that allows it), and `done` is told once the body is read
// to its end, fails, or is dropped.

export interface BodyHooks {
  /** Asked before each chunk is pulled: undefined to pull now, or a promise that settles when it may be pulled. */
  before?: () => Promise<void> | undefined;
  /** Called once, when the body has ended however it ended. */
  done?: () => void;
  /**
   * Asked when a read fails: true when the failure is an end the caller of fetch asked for (it aborted the
   * request), and the body then ends there, as a body read to its end does, instead of failing.
   */
  endedByCaller?: () => boolean;
}

/** The hooks of each body this module made: a layer that wraps a response already made here adds to them. */
const hooksOf = new WeakMap<Response, BodyHooks[]>();

/**
 * `response`, its body read through `hooks`. Several layers of fetch may each hook the same response: one
 * stream carries them all, so a body is never copied through more than one stream of gaggle's.
 */
export function throughBody(response: Response, hooks: BodyHooks): Response {
  const known = hooksOf.get(response);
  if (known) {
    known.push(hooks);
    return response;
  }
  if (!response.body) {
    hooks.done?.();
    return response;
  }
  const all = [hooks];
  const reader = response.body.getReader();
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    for (const { done } of all) done?.();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          for (const { before } of all) await before?.();
          const next = await reader.read();
          if (next.done) {
            finish();
            controller.close();
          } else controller.enqueue(next.value);
        } catch (error) {
          finish();
          if (all.some(({ endedByCaller }) => endedByCaller?.())) controller.close();
          else controller.error(error);
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    },
    // Nothing is read ahead of the reader: a stream that is not read leaves what is still to come in the socket.
    { highWaterMark: 0 },
  );
  const through = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  // The URL a fetch reached is read by the transports (the SSE transport resolves its endpoint against it).
  Object.defineProperty(through, "url", { value: response.url });
  hooksOf.set(through, all);
  return through;
}

/** The requests in flight on each shared signal: one listener on the shared signal aborts them all. */
const followers = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * A signal for one request that follows `outer` (the transport's signal, shared by all its requests), and
 * `release`, which lets it go. fetch hooks a listener onto the signal it is given and unhooks it only when the
 * request is garbage-collected: on a shared signal they pile up under load, past Node's limit each new one
 * printing a MaxListenersExceededWarning. Here the shared signal carries one listener, and a request's own signal
 * is forgotten once its response has been read.
 */
export function requestSignal(outer: AbortSignal | null | undefined): { signal: AbortSignal | undefined; release: () => void } {
  if (!outer || outer.aborted) return { signal: outer ?? undefined, release: () => {} };
  let inFlight = followers.get(outer);
  if (!inFlight) {
    const requests = (inFlight = new Set());
    followers.set(outer, requests);
    outer.addEventListener(
      "abort",
      () => {
        for (const request of requests) request.abort(outer.reason);
        requests.clear();
      },
      { once: true },
    );
  }
  const own = new AbortController();
  inFlight.add(own);
  return { signal: own.signal, release: () => inFlight.delete(own) };
}
