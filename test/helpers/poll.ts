// Bounded polling for tests of asynchronous behaviour: no fixed sleeps standing in for assertions.
import { inspect } from "node:util";

/**
 * Polls `read` every 50 ms until `ok` holds, and returns the value that passed. Throws if `ms` pass first,
 * with the last value read: waiting for something is itself an assertion that it happens.
 */
export async function until<T>(read: () => T | Promise<T>, ok: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!ok(value)) {
    if (Date.now() >= deadline) {
      throw new Error(`the awaited condition did not hold within ${ms} ms; last value read: ${inspect(value, { depth: 4 })}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}
