// Promise.withResolvers (ES2024, in Node 22, not in Node 20): a promise and the two functions that settle it. Made with
// one executor shared by every promise, rather than a closure made for each (which V8 also compiles lazily on its
// first run): for a promise made per call.

export interface WithResolvers<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
}

let resolveTaken: ((value: never) => void) | undefined;
let rejectTaken: ((reason: unknown) => void) | undefined;

/** The executor: Promise's constructor runs it at once, before it returns. */
function take(resolve: (value: never) => void, reject: (reason: unknown) => void): void {
  resolveTaken = resolve;
  rejectTaken = reject;
}

export function withResolvers<T>(): WithResolvers<T> {
  const promise = new Promise<T>(take);
  const made = { promise, resolve: resolveTaken as (value: T) => void, reject: rejectTaken! };
  resolveTaken = rejectTaken = undefined;
  return made;
}
