// The files under a folder as GlobTool and GrepTool see them, as ripgrep does by default: hidden entries and what
// .gitignore files (the folder's own, its subfolders' and its parents' under the roots) leave out are skipped,
// symlinks are not followed, and each folder is listed through its descriptor once it is known to be where it was.
import { constants, type Dirent } from "node:fs";
import { open, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { isIgnored, readIgnoreFile, type IgnoreFile } from "./gitignore.js";
import { descriptorPath } from "./opened.js";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** Folders read at once. */
const PARALLEL_READS = 16;

export interface WalkOptions {
  /** Each file, with its path relative to the search folder (`/`-separated). */
  onFile(path: string, relative: string): void;
  signal?: AbortSignal | undefined;
  /** Also enter version-control folders (.git, .svn, .hg), hidden otherwise: GrepTool's no_ignore_vcs. */
  vcs?: boolean | undefined;
  /** A folder (its real path) lies under the roots: only there are parents' .gitignore files read. */
  inside(real: string): boolean;
}

/** The folders `vcs` lets the walk into. */
export const VCS_FOLDERS = [".git", ".svn", ".hg"];

/** Calls `onFile` for every file under `dir` that is not hidden (version-control folders aside, with `vcs`) or ignored. */
export async function walkFiles(dir: string, options: WalkOptions): Promise<void> {
  const inherited = (await Promise.all(ancestorsOf(dir, options.inside).map((folder) => readIgnoreFile(folder)))).flatMap((file) => file ?? []);
  const pending: Array<{ dir: string; relative: string; ignores: IgnoreFile[] }> = [{ dir, relative: "", ignores: inherited }];
  const worker = async (): Promise<void> => {
    for (let next = pending.pop(); next; next = pending.pop()) {
      if (options.signal?.aborted) return;
      const listed = await list(next.dir);
      if (!listed) continue; // unreadable, gone, or swapped for a symlink: skipped, as rg skips it
      const { entries, own } = listed;
      const ignores = own ? [...next.ignores, own] : next.ignores;
      for (const entry of entries) {
        const folder = entry.isDirectory();
        if (entry.name.startsWith(".") && !(options.vcs && folder && VCS_FOLDERS.includes(entry.name))) continue;
        if (!folder && !entry.isFile()) continue;
        const path = join(next.dir, entry.name);
        if (ignores.length > 0 && isIgnored(ignores, path, entry.name, folder)) continue;
        const relative = next.relative === "" ? entry.name : `${next.relative}/${entry.name}`;
        if (folder) pending.push({ dir: path, relative, ignores });
        else options.onFile(path, relative);
      }
    }
  };
  // Workers that find nothing to do end, and others may add folders later: keep going until none is left.
  while (pending.length > 0 && !options.signal?.aborted) {
    await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, pending.length) }, worker));
  }
}

/**
 * A folder's entries and its .gitignore, read through its descriptor (opened without following a symlink, and
 * checked to be the folder the walk reached), so a folder swapped meanwhile is skipped, never listed elsewhere.
 */
async function list(dir: string): Promise<{ entries: Dirent[]; own: IgnoreFile | undefined } | undefined> {
  let handle;
  try {
    handle = await open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const real = descriptorPath(handle.fd);
    if (real !== undefined && real !== dir) return undefined;
    const through = real === undefined ? dir : `/proc/self/fd/${handle.fd}`;
    const entries = await readdir(through, { withFileTypes: true });
    const own = entries.some((entry) => entry.name === ".gitignore") ? await readIgnoreFile(dir, through) : undefined;
    return { entries, own };
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** The folders from the outermost under the roots down to `dir`'s parent: their .gitignore files apply, as ripgrep reads a parent's. */
export function ancestorsOf(dir: string, inside: (real: string) => boolean): string[] {
  const folders: string[] = [];
  for (let at = dirname(dir); inside(at); at = dirname(at)) {
    folders.unshift(at);
    if (dirname(at) === at) break;
  }
  return folders;
}
