// LS: the entries of one folder under the roots, folders first, with `ignore` globs left out.
import type { Dirent } from "node:fs";
import { readdir, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { textResult } from "../../shared/tool-results.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import { globMatches } from "./glob.js";
import { fsFailure } from "./fs-errors.js";
import { closeQuietly, openFolder, throughDescriptor } from "./opened.js";
import type { Workspace } from "./place.js";

export function lsTool(workspace: Workspace): VirtualTool {
  const { maxResults } = workspace.settings;
  return defineTool({
    name: "LS",
    title: "List a folder",
    description:
      "Lists the files and folders in a folder (folders first, marked with a trailing /; symlinks with their target). " +
      "The path may be absolute or relative to the shell's working directory, and must lie under the allowed roots. " +
      "Prefer GlobTool and GrepTool when you know what you are looking for.",
    input: z.strictObject({
      path: z.string().min(1).describe("The folder to list: absolute, or relative to the shell's working directory"),
      ignore: z.array(z.string()).describe('Glob patterns of names to leave out (e.g. ["*.log", "node_modules"])').optional(),
      ignore_pattern: z.string().describe("One glob pattern of names to leave out (gomcptest's parameter; `ignore` takes several)").optional(),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ path, ignore = [], ignore_pattern }, ctx) => {
      const place = await workspace.place(ctx);
      const dir = await place.confine(path);
      const patterns = [...ignore, ...(ignore_pattern ? [ignore_pattern] : [])];
      // Listed through the open folder's descriptor: a folder swapped for a symlink meanwhile is not followed.
      const folder = await openFolder(place, dir);
      let shown: Array<{ entry: Dirent; folder: boolean; line: string }>;
      let entries: Dirent[];
      try {
        const through = throughDescriptor(folder);
        entries = await readdir(through, { withFileTypes: true });
        const kept = entries.filter((entry) => !patterns.some((pattern) => globMatches(pattern, entry.name)));
        shown = (await inTurn(kept, (entry) => described(through, entry))).sort(
          (a, b) => Number(b.folder) - Number(a.folder) || (a.entry.name < b.entry.name ? -1 : 1),
        );
      } catch (error) {
        throw fsFailure(error, dir);
      } finally {
        await closeQuietly(folder);
      }
      const lines = shown.slice(0, maxResults).map(({ line }) => `  - ${line}`);
      const left = shown.length - lines.length;
      const notes = [
        ...(shown.length === 0 ? [entries.length === 0 ? "  (empty)" : `  (all ${entries.length} entries ignored)`] : []),
        ...(left > 0 ? [`[${left} more entries not shown ([virtual.workspace] max_results = ${maxResults}); list a subfolder or ignore some]`] : []),
      ];
      return textResult([`- ${dir}/`, ...lines, ...notes].join("\n"));
    },
  });
}

/** Symlinks described at once: each costs a stat and a readlink. */
const PARALLEL_LINKS = 16;

/** `describe` of each item, PARALLEL_LINKS at a time, in the items' order. */
async function inTurn<T, R>(items: T[], describe: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await describe(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_LINKS, items.length) }, worker));
  return out;
}

/** An entry's line: a folder (a symlink to one too) marked with a trailing /, a symlink with its target. */
async function described(dir: string, entry: Dirent): Promise<{ entry: Dirent; folder: boolean; line: string }> {
  if (!entry.isSymbolicLink()) {
    const folder = entry.isDirectory();
    return { entry, folder, line: folder ? `${entry.name}/` : entry.name };
  }
  const at = join(dir, entry.name);
  const folder = await stat(at).then(
    (target) => target.isDirectory(),
    () => false,
  );
  const name = folder ? `${entry.name}/` : entry.name;
  const target = await readlink(at).catch(() => undefined);
  return { entry, folder, line: target === undefined ? name : `${name} -> ${target}` };
}
