// Owns finding the config file: the path given, else the first of the places searched. Nothing here loads it, so
// that the executable's relay can find the file without loading the config's schema.
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { isDirectory, isFile } from "../shared/fs-checks.js";
import { ConfigError } from "./errors.js";

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
    throw new ConfigError(path, [{ path: "", message: notAFile(path) }], "not_found");
  }
  const candidates = configSearchPaths(opts);
  const found = candidates.find(isFile);
  if (found !== undefined) return found;
  const message = [
    "no config file found; looked for:",
    ...candidates.map((path) => `  ${path}`),
    "create one of these (gaggle import writes one from the servers your MCP clients list), or pass --config PATH",
  ].join("\n");
  throw new ConfigError("", [{ path: "", message }], "not_found");
}

/** Why the path given is no config file, and what to give instead. */
function notAFile(path: string): string {
  if (!isDirectory(path)) return "config file not found: check the path given to --config";
  const inside = CONFIG_FILE_NAMES.map((name) => join(path, name)).find(isFile);
  return inside === undefined
    ? "is a folder, not a config file: give --config the path of a .toml or .json file"
    : `is a folder, not a config file: give --config the file in it, ${inside}`;
}

export function homeOf(env: NodeJS.ProcessEnv): string {
  const home = env["HOME"];
  return home !== undefined && home !== "" ? home : homedir();
}
