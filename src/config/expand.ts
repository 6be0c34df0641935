// Owns `${VAR}` / `${VAR:-default}` expansion of every string value in a parsed config document.
import { type ConfigIssue, formatPath } from "./errors.js";

const REFERENCE = /\$\{([^}]*)\}/g;
const INNER = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

/**
 * A variable set in the person's shell may still be missing from gaggle's environment, which is the one the MCP
 * client starts gaggle with: the clients that pass only some of theirs, and how each is told to pass more.
 */
export const CLIENT_ENV_HINT =
  "; an MCP client starts gaggle with its own environment, which may leave out variables of your shell: Codex passes only those its entry names in env_vars, and Gemini CLI none whose name holds KEY, TOKEN, SECRET, PASSWORD or AUTH (write the value into its entry's env)";

/** A string that could not be expanded; `unset` names the variables it needs that are not set, when that is all. */
export type ExpansionIssue = ConfigIssue & { unset?: string[] };

export interface Expanded {
  value: unknown;
  /** One issue per string that could not be expanded; that string is left as written. */
  issues: ExpansionIssue[];
}

/**
 * Returns a copy of `doc` with every string value expanded from `env`. Keys are never expanded.
 * `${VAR:-default}` uses the default when VAR is unset or empty (as in sh); `${VAR}` with VAR unset
 * is an error naming the key path. A `$` not followed by `{` is kept literally.
 */
export function expandEnv(doc: unknown, env: NodeJS.ProcessEnv): Expanded {
  const issues: ExpansionIssue[] = [];
  const walk = (value: unknown, path: PropertyKey[]): unknown => {
    if (typeof value === "string") {
      const result = expandString(value, env);
      if (result.error === undefined) return result.value;
      issues.push({ path: formatPath(path), message: result.error, ...(result.unset && { unset: result.unset }) });
      return value;
    }
    if (Array.isArray(value)) return value.map((item, i) => walk(item, [...path, i]));
    // Made with fromEntries: assigning each key would take a "__proto__" key for the prototype.
    if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, [...path, key])]));
    return value;
  };
  return { value: walk(doc, []), issues };
}

/**
 * Expands one string; on failure `error` says which variable and how to fix it, and `unset` names the variables
 * not set when nothing else is wrong.
 */
export function expandString(text: string, env: NodeJS.ProcessEnv): { value: string; error?: string; unset?: string[] } {
  const errors: string[] = [];
  const unset: string[] = [];
  const value = text.replace(REFERENCE, (whole, inner: string) => {
    const match = INNER.exec(inner);
    const name = match?.[1];
    if (!match || name === undefined) {
      errors.push(`invalid variable reference ${whole}: expected \${NAME} or \${NAME:-default}`);
      return whole;
    }
    const fallback = match[2];
    const found = env[name];
    if (fallback !== undefined) return found === undefined || found === "" ? fallback : found;
    if (found === undefined) {
      errors.push(`environment variable ${name} is not set (use \${${name}:-default} to give a default)`);
      unset.push(name);
      return whole;
    }
    return found;
  });
  const open = text.replace(REFERENCE, "").indexOf("${");
  if (errors.length === 0 && open !== -1) errors.push(`unterminated variable reference: "\${" without a closing "}"`);
  if (errors.length === 0) return { value };
  const error = `${errors.join("; ")}${unset.length > 0 ? CLIENT_ENV_HINT : ""}`;
  return errors.length === unset.length ? { value, error, unset } : { value, error };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
