// One audit record: who called what, how it ended, how long it took, and as much of the arguments as [audit] arguments allows.
import { createHash } from "node:crypto";
import type { AuditArguments } from "../../config/observe.js";

export interface AuditRecord {
  time: string;
  principal: string;
  session: string;
  /** The client's name and version, as it introduced itself. */
  client: string | null;
  method: string;
  /** The tool or prompt as the client named it, or the resource's URI. */
  target: string | null;
  /** The child that served it, and its own name of the tool or prompt. */
  child: string | null;
  tool: string | null;
  outcome: "ok" | "tool_error" | "error";
  /** For an error: gaggle's code (TIMEOUT) or the JSON-RPC code ("-32602"). */
  error: string | null;
  duration_ms: number;
  bytes_in: number | null;
  bytes_out: number | null;
  arguments?: unknown;
}

/** Names whose values are never written, at any depth: what a person would call a secret. */
const SECRET_NAME = /token|secret|passw(or)?d|api[-_]?key|authori[sz]ation|credential|cookie|private[-_]?key|session[-_]?key/i;
/** Longer strings are cut: a record stays a line, not a copy of a file that was written. */
const MAX_STRING = 1024;
const MAX_DEPTH = 8;

/** The arguments as a record keeps them. */
export function recordedArguments(args: Record<string, unknown> | undefined, mode: AuditArguments): unknown {
  const given = args ?? {};
  switch (mode) {
    case "none":
      return undefined;
    case "keys":
      return Object.keys(given).sort();
    case "hash":
      return `sha256:${createHash("sha256").update(JSON.stringify(given)).digest("hex")}`;
    case "full":
      return redacted(given, 0);
  }
}

function redacted(value: unknown, depth: number): unknown {
  if (typeof value === "string")
    return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}[... ${value.length - MAX_STRING} more characters]` : value;
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return "[nested too deep]";
  if (Array.isArray(value)) return value.map((item) => redacted(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, SECRET_NAME.test(key) ? "[redacted]" : redacted(item, depth + 1)]));
}

/** The size of a value as JSON, in bytes; null for one JSON cannot hold. */
export function jsonBytes(value: unknown): number | null {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? "");
  } catch {
    return null;
  }
}
