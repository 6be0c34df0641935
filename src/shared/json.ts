// What gaggle asks of parsed JSON everywhere: is it an object, what is at a path in it, and how a found value reads in
// an error message.

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A found value as it appears in an error message: its JSON, cut at 60 characters, or `nothing`. */
export function describeJson(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/**
 * The value at `path` (object keys and array indexes, as strings or numbers) in `root`; undefined where the path
 * leaves the value. Own members only: a key such as "constructor" finds nothing an object does not hold itself.
 */
export function valueAt(root: unknown, path: Iterable<PropertyKey>): unknown {
  let at = root;
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined;
    at = Object.hasOwn(at, key) ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  }
  return at;
}
