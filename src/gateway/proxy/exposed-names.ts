// How a child's tool and prompt names appear to clients in proxy mode: `<prefix>__<name>`, at most 64 characters.
import { createHash } from "node:crypto";

/** The longest tool name Claude Code and other clients accept. */
const MAX_NAME_LENGTH = 64;
const SEPARATOR = "__";

/**
 * Deterministic: the same child and name give the same exposed name on every run. A name that would be too
 * long keeps its start and ends in a hash of the whole, so two long names that share a start stay distinct.
 */
export function exposedName(prefix: string, name: string): string {
  const full = prefix === "" ? name : `${prefix}${SEPARATOR}${name}`;
  if (full.length <= MAX_NAME_LENGTH) return full;
  const hash = createHash("sha256").update(full).digest("hex").slice(0, 8);
  return `${full.slice(0, MAX_NAME_LENGTH - hash.length - 1)}_${hash}`;
}

/** Whether `name` is exposed under `prefix`: a prefixed name, of that prefix (the hashed long form included). */
export function underPrefix(prefix: string, name: string): boolean {
  return prefix !== "" && name.startsWith(`${prefix}${SEPARATOR}`);
}
