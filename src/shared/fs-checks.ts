// What gaggle asks of a path before it uses one; each answer is false (or the path as given) when it cannot be read.
// These block the event loop: for start-up, config loading and CLI commands; fs-probes.ts asks without blocking.
/* eslint-disable no-restricted-syntax -- synchronous: these serve start-up, config loading and CLI commands. */
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve, sep } from "node:path";

export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A regular file this process may run. */
export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The path with symlinks resolved, so it compares equal to the file or folder it really is; absolute either way. */
export function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return isAbsolute(path) ? path : resolve(path);
  }
}

export type CommandLookup = { found: string } | { missing: string; searched: string[] };

/**
 * A command looked up the way spawn does: a path (one holding a "/") as it is, relative to `cwd`; a bare name in
 * the folders of `pathVariable`, the first that holds it as a file this process may run.
 */
export function findExecutable(command: string, cwd: string, pathVariable: string | undefined): CommandLookup {
  const { candidates, searched } = commandCandidates(command, cwd, pathVariable);
  const found = candidates.find(isExecutableFile);
  return found === undefined ? { missing: command, searched } : { found };
}

/** Where findExecutable looks for `command`, in order (`candidates`), and the PATH folders that means (`searched`). */
export function commandCandidates(command: string, cwd: string, pathVariable: string | undefined): { candidates: string[]; searched: string[] } {
  if (command.includes("/")) return { candidates: [isAbsolute(command) ? command : resolve(cwd, command)], searched: [] };
  const searched = (pathVariable ?? "").split(delimiter).filter(Boolean);
  return { candidates: searched.map((dir) => join(dir, command)), searched };
}

/** True when `dir` is `prefix` or inside it, by whole path components ("/a/b" is not under "/a/bc"). */
export function isUnder(dir: string, prefix: string): boolean {
  if (dir === prefix) return true;
  const withSep = prefix.endsWith(sep) ? prefix : prefix + sep;
  return dir.startsWith(withSep);
}
