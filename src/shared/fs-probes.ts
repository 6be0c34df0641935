// The questions of fs-checks.ts asked without blocking the event loop, for code that answers a client's call or an event.
import { constants } from "node:fs";
import { access, lstat, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { commandCandidates, type CommandLookup } from "./fs-checks.js";

export async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

export async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/** The path with symlinks resolved, so it compares equal to the file or folder it really is; absolute either way. */
export async function canonical(path: string): Promise<string> {
  return realpath(path).catch(() => (isAbsolute(path) ? path : resolve(path)));
}

/** A regular file this process may run. */
export async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** A command looked up the way spawn does, as fs-checks.ts's findExecutable looks it up. */
export async function findExecutable(command: string, cwd: string, pathVariable: string | undefined): Promise<CommandLookup> {
  const { candidates, searched } = commandCandidates(command, cwd, pathVariable);
  for (const path of candidates) if (await isExecutableFile(path)) return { found: path };
  return { missing: command, searched };
}

/**
 * Where `path` really is, so a write to it lands there: its deepest existing ancestor with symlinks resolved, and
 * the rest as written. Undefined for a symlink whose target does not exist, which a write would create wherever it
 * points.
 */
export async function realTarget(path: string): Promise<string | undefined> {
  const rest: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    const real = await realpath(at).catch(() => undefined);
    if (real !== undefined) return join(real, ...rest.reverse());
    // Not there: a dangling symlink stops the walk; anything else leaves it to its folder.
    if ((await lstat(at).catch(() => undefined))?.isSymbolicLink()) return undefined;
    if (dirname(at) === at) return path;
    rest.push(basename(at));
  }
}

/** Whether something is there, symlinks followed (as existsSync answers). */
export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Where the kernel lands opening `path` from the real folder `base`: each component in turn, symlinks followed where
 * they stand, so `link/..` is the parent of the link's target (a textual `..` would cancel the link). A component that
 * does not exist yet ends the walk: the rest as written, unless it climbs with `..` (the open would fail). Undefined
 * for a symlink whose target does not exist, or for a path the kernel could not open.
 */
export async function kernelTarget(base: string, path: string): Promise<string | undefined> {
  let at = isAbsolute(path) ? "/" : base;
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === "..") {
      at = dirname(at);
      continue;
    }
    const next = join(at, part);
    const real = await realpath(next).catch(() => undefined);
    if (real !== undefined) {
      at = real;
      continue;
    }
    // Not there yet, unless a dangling symlink: a command before this one may make it.
    if ((await lstat(next).catch(() => undefined))?.isSymbolicLink()) return undefined;
    const rest = parts.slice(i + 1);
    return rest.includes("..") ? undefined : join(next, ...rest);
  }
  return at;
}
