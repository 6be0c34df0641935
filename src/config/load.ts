// Owns finding the config file and the pipeline read -> parse -> expand env -> validate -> normalize.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { isFile } from "../shared/fs-checks.js";
import { ConfigError, type ConfigIssue, fallbackErrorMap, issuesFromZod } from "./errors.js";
import { expandEnv } from "./expand.js";
import { parseDocument } from "./parse.js";
import { type GaggleConfig, configFileSchema } from "./schema.js";

export const CONFIG_FILE_NAMES = ["children_config.toml", "children_config.json"] as const;

export interface FindConfigOptions {
  /** A path the user named (`--config`); relative to `cwd`. When given, nothing else is tried. */
  explicit?: string | undefined;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** The places searched when no path is given, in order. */
export function configSearchPaths(opts: { cwd: string; env: NodeJS.ProcessEnv }): string[] {
  const xdg = opts.env["XDG_CONFIG_HOME"];
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and should be ignored.
  const configHome = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homeOf(opts.env), ".config");
  return [...CONFIG_FILE_NAMES.map((name) => resolve(opts.cwd, name)), ...CONFIG_FILE_NAMES.map((name) => join(configHome, "gaggle", name))];
}

/** The absolute path of the config file to load; throws ConfigError (code "not_found") naming every place looked. */
export function findConfigPath(opts: FindConfigOptions): string {
  if (opts.explicit !== undefined) {
    const path = resolve(opts.cwd, opts.explicit);
    if (isFile(path)) return path;
    throw new ConfigError(path, [{ path: "", message: "config file not found" }], "not_found");
  }
  const candidates = configSearchPaths(opts);
  const found = candidates.find(isFile);
  if (found !== undefined) return found;
  const message = ["no config file found; looked for:", ...candidates.map((path) => `  ${path}`), "create one of these or pass --config PATH"].join(
    "\n",
  );
  throw new ConfigError("", [{ path: "", message }], "not_found");
}

/** Reads, parses, expands and validates the config file at `path`. Throws ConfigError listing every problem. */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): GaggleConfig {
  const file = resolve(path);
  let text: string;
  try {
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
  const expanded = expandEnv(parsed.doc, env);
  const result = configFileSchema({ path: file, home: homeOf(env) }).safeParse(expanded.value, { error: fallbackErrorMap });
  // A string left unexpanded would also fail validation; its expansion error says all there is to say.
  const unexpanded = new Set(expanded.issues.map((issue) => issue.path));
  const issues: ConfigIssue[] = [
    ...parsed.issues,
    ...expanded.issues,
    ...(result.success ? [] : issuesFromZod(result.error.issues).filter((issue) => !unexpanded.has(issue.path))),
  ];
  if (issues.length > 0 || !result.success) throw new ConfigError(file, issues, "invalid");
  return result.data;
}

function homeOf(env: NodeJS.ProcessEnv): string {
  const home = env["HOME"];
  return home !== undefined && home !== "" ? home : homedir();
}

/**
 * The config of a file with nothing in it, for a gaggle that serves while its file does not load: no children,
 * every default, `path` kept so that the file is watched and named.
 */
export function emptyConfig(path: string, env: NodeJS.ProcessEnv = process.env): GaggleConfig {
  const file = resolve(path);
  return configFileSchema({ path: file, home: homeOf(env) }).parse({});
}
