// What gaggle asks of a path before it uses one; each answer is false (or the path as given) when it cannot be read.
// These block the event loop: for start-up, config loading and CLI commands; fs-probes.ts asks without blocking.
/* eslint-disable no-restricted-syntax -- synchronous: these serve start-up, config loading and CLI commands. */
import { accessSync, constants, lstatSync, realpathSync, statSync } from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from "node:path";

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
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : resolve(cwd, command);
    return isExecutableFile(path) ? { found: path } : { missing: command, searched: [] };
  }
  const searched = (pathVariable ?? "").split(delimiter).filter(Boolean);
  for (const dir of searched) {
    const path = join(dir, command);
    if (isExecutableFile(path)) return { found: path };
  }
  return { missing: command, searched };
}

/** True when `dir` is `prefix` or inside it, by whole path components ("/a/b" is not under "/a/bc"). */
export function isUnder(dir: string, prefix: string): boolean {
  if (dir === prefix) return true;
  const withSep = prefix.endsWith(sep) ? prefix : prefix + sep;
  return dir.startsWith(withSep);
}

/**
 * Where `path` really is, so a write to it lands there: its deepest existing ancestor with symlinks resolved, and
 * the rest as written. Undefined for a symlink whose target does not exist, which a write would create wherever it
 * points.
 */
export function realTarget(path: string): string | undefined {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch {
      try {
        if (lstatSync(at).isSymbolicLink()) return undefined;
      } catch {
        // Not there: its folder decides.
      }
      const parent = dirname(at);
      if (parent === at) return path;
      rest.push(basename(at));
      at = parent;
    }
  }
}

/**
 * Where the kernel lands opening `path` from the real folder `base`: each component in turn, symlinks followed where
 * they stand, so `link/..` is the parent of the link's target (a textual `..` would cancel the link). A component that
 * does not exist yet ends the walk: the rest as written, unless it climbs with `..` (the open would fail). Undefined
 * for a symlink whose target does not exist, or for a path the kernel could not open.
 */
export function kernelTarget(base: string, path: string): string | undefined {
  let at = isAbsolute(path) ? "/" : base;
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === "..") {
      at = dirname(at);
      continue;
    }
    const next = join(at, part);
    try {
      at = realpathSync(next);
    } catch {
      try {
        if (lstatSync(next).isSymbolicLink()) return undefined;
      } catch {
        // Not there yet: a command before this one may make it.
      }
      const rest = parts.slice(i + 1);
      return rest.includes("..") ? undefined : join(next, ...rest);
    }
  }
  return at;
}
