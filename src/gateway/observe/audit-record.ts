// One audit record: who called what, how it ended, how long it took, and as much of the arguments as [audit] arguments allows.
import { createHash } from "node:crypto";
import type { AuditArguments } from "../../config/observe.js";
import { MAX_NESTING } from "../../shared/json-rpc-codec.js";

export interface AuditRecord extends CallRecord {
  time: string;
}

/** An audit record without its time, as a call leaves it. */
export interface CallRecord {
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
  /** "cancelled": its client cancelled it before it ended. */
  outcome: "ok" | "tool_error" | "error" | "cancelled";
  /** For an error: gaggle's code (TIMEOUT) or the JSON-RPC code ("-32602"). */
  error: string | null;
  duration_ms: number;
  bytes_in: number | null;
  bytes_out: number | null;
  arguments?: unknown;
}

/** The record of a call made at `at` (ms since the epoch), its time first. */
export function withTime(at: number, record: CallRecord): AuditRecord {
  return { time: new Date(at).toISOString(), ...record };
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

/**
 * The size of a value as JSON, estimated from its strings' lengths and its shape without writing it: exact for
 * ASCII text that needs no escapes. A value nested deeper than a message may be counts what lies above that depth.
 */
export function estimatedJsonBytes(value: unknown, depth = 0): number {
  switch (typeof value) {
    case "string":
      return value.length + 2;
    case "number":
    case "bigint":
      return String(value).length;
    case "boolean":
      return value ? 4 : 5;
    case "object":
      if (value === null) return 4;
      if (depth >= MAX_NESTING) return 2;
      return Array.isArray(value) ? arrayBytes(value, depth) : objectBytes(value as Record<string, unknown>, depth);
    default:
      return 0;
  }
}

function arrayBytes(items: unknown[], depth: number): number {
  let bytes = 1 + items.length;
  for (const item of items) bytes += item === undefined ? 4 : estimatedJsonBytes(item, depth + 1);
  return bytes + (items.length === 0 ? 1 : 0);
}

function objectBytes(object: Record<string, unknown>, depth: number): number {
  let bytes = 2;
  let members = 0;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const item = object[key];
    if (item === undefined || typeof item === "function") continue;
    bytes += key.length + 3 + estimatedJsonBytes(item, depth + 1);
    members++;
  }
  return bytes + Math.max(0, members - 1);
}
