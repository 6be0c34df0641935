// Bounded polling for tests of asynchronous behaviour: no fixed sleeps standing in for assertions.

/** Polls `read` every 50 ms until `ok` holds or `ms` pass; returns the last value read either way. */
export async function until<T>(read: () => T | Promise<T>, ok: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!ok(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}
