// How a path written in the config file is read, whichever table it is in: `~` is the home folder, and a
// relative path starts from the config file's folder.
import { dirname, isAbsolute, join, resolve } from "node:path";

export interface PathOptions {
  /** Absolute path of the config file; relative paths start from its folder. */
  path: string;
  /** Home folder, for `~` and `~/...`. */
  home: string;
}

/** `~` and `~/...` under `home`; any other path as it is. */
export function expandHome(path: string, home: string): string {
  return path === "~" || path.startsWith("~/") ? join(home, path.slice(1)) : path;
}

/** A file or folder, made absolute. */
export function configPath(path: string, opts: PathOptions): string {
  return resolve(dirname(opts.path), expandHome(path, opts.home));
}

/** A command holding a `/` (or `~/`) is a path, made absolute; a bare name is left for the PATH lookup. */
export function configCommand(command: string, opts: PathOptions): string {
  const expanded = expandHome(command, opts.home);
  return /[\\/]/.test(expanded) && !isAbsolute(expanded) ? resolve(dirname(opts.path), expanded) : expanded;
}
