// The files under a folder as GlobTool and GrepTool see them, as ripgrep does by default: hidden entries and what
// .gitignore files (the folder's own, its subfolders' and its parents') leave out are skipped, symlinks are not followed.
import { readdir } from "node:fs/promises";
import type { Dirent } from "node:fs";
import { dirname, join } from "node:path";
import { isIgnored, readIgnoreFile, type IgnoreFile } from "./gitignore.js";

/** Folders read at once. */
const PARALLEL_READS = 16;

export interface WalkOptions {
  /** Each file, with its path relative to the search folder (`/`-separated). */
  onFile(path: string, relative: string): void;
  signal?: AbortSignal | undefined;
  /** Also enter version-control folders (.git, .svn, .hg), hidden otherwise: GrepTool's no_ignore_vcs. */
  vcs?: boolean | undefined;
}

/** The folders `vcs` lets the walk into. */
export const VCS_FOLDERS = [".git", ".svn", ".hg"];

/** Calls `onFile` for every file under `dir` that is not hidden (version-control folders aside, with `vcs`) or ignored. */
export async function walkFiles(dir: string, options: WalkOptions): Promise<void> {
  const inherited = ancestorsOf(dir).flatMap((folder) => readIgnoreFile(folder) ?? []);
  const pending: Array<{ dir: string; relative: string; ignores: IgnoreFile[] }> = [{ dir, relative: "", ignores: inherited }];
  const worker = async (): Promise<void> => {
    for (let next = pending.pop(); next; next = pending.pop()) {
      if (options.signal?.aborted) return;
      let entries: Dirent[];
      try {
        entries = await readdir(next.dir, { withFileTypes: true });
      } catch {
        continue; // unreadable or gone: skipped, as rg skips it
      }
      const own = readIgnoreFileIfListed(next.dir, entries);
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

function readIgnoreFileIfListed(dir: string, entries: Dirent[]): IgnoreFile | undefined {
  return entries.some((entry) => entry.name === ".gitignore") ? readIgnoreFile(dir) : undefined;
}

/** The folders from the file system's root down to `dir`'s parent: their .gitignore files apply, as ripgrep reads them. */
function ancestorsOf(dir: string): string[] {
  const folders: string[] = [];
  for (let at = dirname(dir); ; at = dirname(at)) {
    folders.unshift(at);
    if (dirname(at) === at) return folders;
  }
}
