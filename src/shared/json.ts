// What gaggle asks of parsed JSON everywhere: is it an object, and how a found value reads in an error message.

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
