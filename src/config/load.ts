// Owns the pipeline read -> parse -> expand env -> validate -> normalize; finding the file is find.ts's.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError, type ConfigIssue, fallbackErrorMap, issuesFromZod } from "./errors.js";
import { expandEnv, type ExpansionIssue } from "./expand.js";
import { homeOf } from "./find.js";
import { parseDocument } from "./parse.js";
import { type GaggleConfig, configFileSchema } from "./schema.js";
import { VIRTUAL_CHILD_NAMES } from "./virtual/index.js";

export { CONFIG_FILE_NAMES, configSearchPaths, findConfigPath, type FindConfigOptions } from "./find.js";

/** Reads, parses, expands and validates the config file at `path`. Throws ConfigError listing every problem. */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): GaggleConfig {
  const file = resolve(path);
  let text: string;
  try {
    // eslint-disable-next-line no-restricted-syntax -- synchronous: read at start-up, by CLI commands, and on a reload, which builds the whole config in one step.
    text = readFileSync(file, "utf8");
  } catch (err) {
    const reason = err instanceof Error && "code" in err ? String(err.code) : String(err);
    const message = reason === "ENOENT" ? "config file not found" : `cannot read config file (${reason})`;
    throw new ConfigError(file, [{ path: "", message }], reason === "ENOENT" ? "not_found" : "unreadable", { cause: err });
  }
  return validateConfigText(text, file, env);
}

/**
 * The same pipeline on text already in hand; `path` decides the format (by extension), anchors
 * relative paths and names the file in messages. Nothing is read from disk.
 */
export function validateConfigText(text: string, path: string, env: NodeJS.ProcessEnv = process.env): GaggleConfig {
  const file = resolve(path);
  const parsed = parseDocument(text, file);
  const checked = checkDocument(parsed.doc, file, env);
  const unexpanded = checked.unexpanded.map(({ path, message }) => ({ path, message }));
  const issues: ConfigIssue[] = [...parsed.issues, ...unexpanded, ...checked.invalid];
  if (issues.length > 0 || checked.config === undefined) throw new ConfigError(file, issues, "invalid");
  return checked.config;
}

/**
 * A parsed document checked as the config at `path`: `unexpanded`, the strings whose variables could not be expanded
 * from `env`; `invalid`, what the schema refuses besides them; `config`, when the schema takes it.
 */
export function checkDocument(
  doc: unknown,
  path: string,
  env: NodeJS.ProcessEnv,
): { config?: GaggleConfig; unexpanded: ExpansionIssue[]; invalid: ConfigIssue[] } {
  const file = resolve(path);
  const expanded = expandEnv(doc, env);
  const result = configFileSchema({ path: file, home: homeOf(env) }).safeParse(expanded.value, { error: fallbackErrorMap });
  // A string left unexpanded would also fail validation; its expansion error says all there is to say.
  const unexpanded = new Set(expanded.issues.map((issue) => issue.path));
  const invalid = result.success ? [] : issuesFromZod(result.error.issues).filter((issue) => !unexpanded.has(issue.path));
  return { ...(result.success && { config: result.data }), unexpanded: expanded.issues, invalid };
}

/**
 * The config a gaggle serves while its file does not load and none has: no children, not even the built-in ones
 * enabled by default (the file may hold the policy that would confine them), every other default, `path` kept so
 * that the file is watched and named.
 */
export function emptyConfig(path: string, env: NodeJS.ProcessEnv = process.env): GaggleConfig {
  const file = resolve(path);
  const virtual = Object.fromEntries(VIRTUAL_CHILD_NAMES.map((name) => [name, { enabled: false }]));
  return configFileSchema({ path: file, home: homeOf(env) }).parse({ virtual });
}
