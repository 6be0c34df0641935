// GlobTool: the files under a folder whose paths match a glob, newest first, with size, modification time and permissions.
import { lstat, stat } from "node:fs/promises";
import { z } from "zod";
import { formatBytes } from "../../shared/byte-size.js";
import { GaggleError } from "../../shared/errors.js";
import { textResult } from "../../shared/tool-results.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import { permissions } from "./file-facts.js";
import { fsFailure } from "./fs-errors.js";
import { globRegExp } from "./glob.js";
import type { Place, Workspace } from "./place.js";
import { walkFiles } from "./walk.js";

export function globTool(workspace: Workspace): VirtualTool {
  const { maxResults } = workspace.settings;
  return defineTool({
    name: "GlobTool",
    title: "Find files by name",
    description:
      'Finds files whose paths (relative to the search folder) match a glob: "**/*.ts" in every folder, "src/**/*.{ts,tsx}", ' +
      '"*.md" in the folder itself. Hidden files and what .gitignore files leave out are skipped. Answers newest first, each ' +
      `with its size, modification time and permissions; at most ${maxResults} files, with a note when more matched.`,
    input: z.strictObject({
      pattern: z.string().min(1).describe("The glob to match paths against, relative to the search folder"),
      path: z.string().min(1).describe("The folder to search (default: the shell's working directory)").optional(),
      exclude: z.string().min(1).describe('A glob of paths to leave out (e.g. "**/*.test.ts")').optional(),
      limit: z.int().min(1).describe(`Files to list at most (default and at most ${maxResults})`).optional(),
      absolute: z.boolean().describe("List absolute paths instead of paths relative to the search folder (default false)").optional(),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ pattern, path, exclude, limit, absolute = false }, ctx) => {
      const place = await workspace.place(ctx);
      const dir = await searchFolder(place, path);
      const matcher = globRegExp(pattern.replace(/^\.\//, ""));
      const excluded = exclude === undefined ? undefined : globRegExp(exclude.replace(/^\.\//, ""));
      const found: Array<{ path: string; relative: string }> = [];
      await walkFiles(dir, {
        signal: ctx.cancel?.signal,
        inside: place.inside,
        onFile: (file, relative) => {
          if (matcher.test(relative) && !excluded?.test(relative)) found.push({ path: file, relative });
        },
      });
      const files = await Promise.all(
        found.map(async (file) => {
          // lstat: a file swapped for a symlink since the walk is dropped, not described by its target.
          const info = await lstat(file.path).catch(() => undefined);
          return { ...file, info: info?.isFile() ? info : undefined };
        }),
      );
      const listed = files
        .filter((file) => file.info !== undefined)
        .sort((a, b) => b.info!.mtimeMs - a.info!.mtimeMs || (a.relative < b.relative ? -1 : 1));
      if (listed.length === 0) return textResult(`No files under ${dir} match ${pattern}`);
      const cap = Math.min(limit ?? maxResults, maxResults);
      const shown = listed.slice(0, cap).map(({ path: full, relative, info }) => {
        return `${absolute ? full : relative} (${formatBytes(info!.size)}, modified ${when(info!.mtime)}, ${permissions(info!.mode)})`;
      });
      const more = listed.length - shown.length;
      const note = more > 0 ? `\n[${more} more files matched; narrow the pattern or path, or raise limit (at most ${maxResults})]` : "";
      return textResult(`${listed.length} files under ${dir} match ${pattern}, newest first:\n${shown.join("\n")}${note}`);
    },
  });
}

/** The folder a search starts from: `path` under the roots, else the shell's working directory. */
export async function searchFolder(place: Place, path: string | undefined): Promise<string> {
  const dir = await place.confine(path ?? ".");
  try {
    if (!(await stat(dir)).isDirectory()) throw new GaggleError("INVALID_ARGS", `${dir} is a file, not a folder to search`);
  } catch (error) {
    throw fsFailure(error, dir);
  }
  return dir;
}

function when(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}
