// Where a path really is, asked without blocking the event loop: the questions of src/shared/fs-checks.ts that a
// call's paths need (canonical, realTarget), through node:fs/promises, so a path on a hung mount stalls only its call.
import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";

/** The path with symlinks resolved, so it compares equal to the file or folder it really is; absolute either way. */
export async function canonical(path: string): Promise<string> {
  return realpath(path).catch(() => (isAbsolute(path) ? path : resolve(path)));
}

/**
 * Where `path` really is, so a write to it lands there: its deepest existing ancestor with symlinks resolved, and
 * the rest as written. Undefined for a symlink whose target does not exist, which a write would create wherever it
 * points.
 */
export async function realTarget(path: string): Promise<string | undefined> {
  const rest: string[] = [];
  for (let at = path; ;) {
    const real = await realpath(at).catch(() => undefined);
    if (real !== undefined) return join(real, ...rest.reverse());
    // Not there, or a symlink to nothing: only the second stops the walk; otherwise its folder decides.
    if ((await lstat(at).catch(() => undefined))?.isSymbolicLink()) return undefined;
    const parent = dirname(at);
    if (parent === at) return path;
    rest.push(basename(at));
    at = parent;
  }
}
