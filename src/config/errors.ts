// Owns ConfigError and the wording of config problems: key paths, found values, zod issue conversion.
import { basename, isAbsolute, relative } from "node:path";
import type { z } from "zod";

/** One problem in a config file: at a key path (`mcp_servers.echo.timeout_ms`), or at a place in its text. */
export interface ConfigIssue {
  /** The dotted key path; "" for the file as a whole, or for a problem at a place in its text. */
  path: string;
  message: string;
  /** Where in the text, for a problem with the text itself (a syntax error). */
  at?: { line: number; col: number };
}

/** not_found: no file to load; unreadable: fs error; syntax: TOML/JSON did not parse; invalid: content rejected. */
export type ConfigErrorCode = "not_found" | "unreadable" | "syntax" | "invalid";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly file: string;
  readonly issues: ConfigIssue[];
  readonly code: ConfigErrorCode;

  /** `file` is the absolute path of the config file, or "" when the problem is not about one file. */
  constructor(file: string, issues: ConfigIssue[], code: ConfigErrorCode = "invalid", options?: ErrorOptions) {
    super(formatIssues(file, issues), options);
    this.file = file;
    this.issues = issues;
    this.code = code;
  }
}

/** Every issue on its own line, each prefixed by the file: `file: key.path: message` or `file:12:5: message`. */
export function formatIssues(file: string, issues: readonly ConfigIssue[]): string {
  const shown = file === "" ? "" : displayPath(file);
  return issues
    .map(({ path, message, at }) => {
      if (at) return `${shown}:${at.line}:${at.col}: ${message}`;
      const parts = [shown, path, message].filter((part) => part !== "");
      return parts.join(": ");
    })
    .join("\n");
}

/**
 * Where each issue is, without what it says (a message may quote a value of the file): `file: key.path` or
 * `file:12:5`, the file by its name alone. For readers that may see where a config is broken, not its contents,
 * nor whom it lets in.
 */
export function issuePlaces(error: ConfigError): string[] {
  const file = error.file === "" ? "" : basename(error.file);
  return error.issues.map(({ path, at }) => (at ? `${file}:${at.line}:${at.col}` : [file, openPath(path)].filter((part) => part !== "").join(": ")));
}

/** The token table's keys name the people a gaggle lets in: a place under it stops at the table. */
const TOKENS_TABLE = "gateway.auth_tokens";

function openPath(path: string): string {
  return path.startsWith(`${TOKENS_TABLE}.`) || path.startsWith(`${TOKENS_TABLE}[`) ? TOKENS_TABLE : path;
}

/** Paths under the working directory are shown relative to it (`children_config.toml`), others absolute. */
export function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

/** `mcp_servers.echo.args[2]`; keys that are not plain words are quoted: `mcp_servers["my server"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (typeof seg === "string" && /^[A-Za-z0-9_-]+$/.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

const MAX_SHOWN = 60;

/** The type and a short JSON of a found value: `string "abc"`, `number -1`, `array ["a",1]`, `nothing`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "bigint") return `integer ${value}`;
  if (value instanceof Date) return `date ${shorten(value.toISOString())}`;
  const type = Array.isArray(value) ? "array" : typeof value === "object" ? "table" : typeof value;
  let json: string;
  try {
    json = JSON.stringify(value) ?? String(value);
  } catch {
    json = String(value);
  }
  return `${type} ${shorten(json)}`;
}

function shorten(text: string): string {
  return text.length <= MAX_SHOWN ? text : `${text.slice(0, MAX_SHOWN - 3)}...`;
}

/**
 * Error map for issues whose schema did not word its own message (see `expected()` in schema.ts).
 * Pass it as `safeParse(data, { error: fallbackErrorMap })`.
 */
export const fallbackErrorMap: z.core.$ZodErrorMap = (issue) => {
  const got = describeValue(issue.input);
  switch (issue.code) {
    case "invalid_type":
      return `expected ${issue.expected}, got ${got}`;
    case "invalid_value":
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, got ${got}`;
    case "too_small":
      return `expected ${issue.inclusive ? ">=" : ">"} ${String(issue.minimum)}, got ${got}`;
    case "too_big":
      return `expected ${issue.inclusive ? "<=" : "<"} ${String(issue.maximum)}, got ${got}`;
    default:
      return undefined;
  }
};

/**
 * Flattens zod issues into ConfigIssues. A failed union reports the branch that matched the value's
 * shape (the one without a top-level type mismatch), so the user sees `mcp_servers.x.args: ...`
 * rather than "no union branch matched".
 */
export function issuesFromZod(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_union") {
      const shaped = issue.errors.filter((branch) => !branch.some((b) => b.path.length === 0 && b.code === "invalid_type"));
      const [only] = shaped;
      if (shaped.length === 1 && only) {
        out.push(...issuesFromZod(only, path));
        continue;
      }
    }
    out.push({ path: formatPath(path), message: issue.message });
  }
  return out;
}
