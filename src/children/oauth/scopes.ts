// OAuth scopes as space-separated strings (RFC 6749 section 3.3).

/** Every scope of each list, once, in the order first seen; undefined when there are none. */
export function unionOfScopes(...lists: (string | undefined)[]): string | undefined {
  const scopes = new Set(lists.flatMap((list) => list?.split(" ").filter(Boolean) ?? []));
  return scopes.size > 0 ? [...scopes].join(" ") : undefined;
}

/** Whether every scope of `wanted` is in `granted`. */
export function coversScopes(granted: string | undefined, wanted: string | undefined): boolean {
  const have = new Set(granted?.split(" ") ?? []);
  return (wanted?.split(" ").filter(Boolean) ?? []).every((scope) => have.has(scope));
}
