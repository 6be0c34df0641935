// GrepTool: the lines matching a regular expression in the files under a folder, with ripgrep when it is on PATH
// and a JavaScript search otherwise; binary, hidden and ignored files skipped, the answer capped with a note.
import { spawn } from "node:child_process";
import { open, stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { z } from "zod";
import { GaggleError, errorMessage } from "../../shared/errors.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import { SNIFF_BYTES } from "./file-kind.js";
import { globRegExp } from "./glob.js";
import { searchFolder } from "./glob-tool.js";
import type { Workspace } from "./place.js";
import { walkFiles } from "./walk.js";

/** Longer lines are cut in the answer. */
const MAX_LINE_CHARS = 500;
/** Larger files are not searched by the JavaScript search (ripgrep searches them). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Files searched at once by the JavaScript search. */
const PARALLEL_FILES = 16;

export interface Match {
  /** Relative to the search folder. */
  file: string;
  line: number;
  text: string;
}

export interface Search {
  pattern: string;
  ignoreCase: boolean;
  /** A glob of names (or, with a `/`, of paths from the search folder) to search. */
  include: string | undefined;
  dir: string;
  /** Matches beyond this are not collected: the search stops and says more were found. */
  max: number;
  signal: AbortSignal | undefined;
}

export interface Found {
  matches: Match[];
  more: boolean;
}

/** `rg`: the path of ripgrep to search with, or undefined for the JavaScript search. */
export function grepTool(workspace: Workspace, rg: string | undefined): VirtualTool {
  const { maxResults } = workspace.settings;
  return defineTool({
    name: "GrepTool",
    title: "Search file contents",
    description:
      'Searches the files under a folder for lines matching a regular expression ("log.*Error", "function\\\\s+\\\\w+"). ' +
      'include keeps only files whose names match a glob ("*.js", "*.{ts,tsx}"). Hidden files, binary files and what ' +
      `.gitignore files leave out are skipped. Answers file:line:text, files newest first; at most ${maxResults} lines, ` +
      "with a note when more matched.",
    input: z.strictObject({
      pattern: z.string().min(1).describe("The regular expression to search for"),
      path: z.string().min(1).describe("The folder to search (default: the shell's working directory)").optional(),
      include: z.string().min(1).describe('A glob of file names to search (e.g. "*.js", "*.{ts,tsx}")').optional(),
      ignore_case: z.boolean().describe("Match letters in either case (default false)").optional(),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ pattern, path, include, ignore_case = false }, ctx) => {
      const place = await workspace.place(ctx);
      const dir = searchFolder(place, path);
      const search: Search = { pattern, ignoreCase: ignore_case, include, dir, max: maxResults, signal: ctx.cancel?.signal };
      const found = rg ? await withRipgrep(rg, search) : await withJavaScript(search);
      if (found.matches.length === 0) return text(`No lines under ${dir} match ${pattern}`);
      const lines = await newestFirst(dir, found.matches);
      const files = new Set(found.matches.map((match) => match.file)).size;
      const note = found.more
        ? `\n[more lines matched past the first ${maxResults} ([virtual.workspace] max_results); narrow the pattern, path or include]`
        : "";
      return text(`${found.matches.length}${found.more ? "+" : ""} matching lines in ${files} files under ${dir}:\n${lines.join("\n")}${note}`);
    },
  });
}

/** file:line:text, the files most recently changed first, each file's lines in order. */
async function newestFirst(dir: string, matches: Match[]): Promise<string[]> {
  const byFile = new Map<string, Match[]>();
  for (const match of matches) byFile.set(match.file, [...(byFile.get(match.file) ?? []), match]);
  const times = new Map(
    await Promise.all([...byFile.keys()].map(async (file) => [file, (await stat(`${dir}/${file}`).catch(() => undefined))?.mtimeMs ?? 0] as const)),
  );
  const files = [...byFile.keys()].sort((a, b) => times.get(b)! - times.get(a)! || (a < b ? -1 : 1));
  return files.flatMap((file) =>
    byFile
      .get(file)!
      .sort((a, b) => a.line - b.line)
      .map((match) => `${file}:${match.line}:${cut(match.text)}`),
  );
}

function cut(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}... [line cut]` : line;
}

/** ripgrep, told to read .gitignore files outside git repositories too, and nothing but them and its own ignore files. */
export async function withRipgrep(rg: string, search: Search): Promise<Found> {
  const args = ["--no-config", "--no-heading", "--with-filename", "--line-number", "--null", "--color", "never", "--no-require-git"];
  args.push("--no-ignore-global", "--no-ignore-exclude", "--max-columns", String(MAX_LINE_CHARS * 2), "--max-columns-preview");
  if (search.ignoreCase) args.push("--ignore-case");
  // A file type, not --glob: rg lets a --glob override .gitignore, a type leaves it in force. A type matches names only.
  if (search.include?.includes("/")) args.push("--glob", search.include);
  else if (search.include) args.push("--type-add", `gaggleinclude:${search.include}`, "--type", "gaggleinclude");
  args.push("--regexp", search.pattern, "--", ".");
  const child = spawn(rg, args, { cwd: search.dir, stdio: ["ignore", "pipe", "pipe"] });
  const matches: Match[] = [];
  let more = false;
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-4000)));
  const stop = () => child.kill("SIGKILL");
  search.signal?.addEventListener("abort", stop, { once: true });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  try {
    for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) {
      const nul = line.indexOf("\0");
      const colon = line.indexOf(":", nul + 1);
      if (nul === -1 || colon === -1) continue;
      if (matches.length === search.max) {
        more = true;
        stop();
        break;
      }
      matches.push({ file: line.slice(0, nul).replace(/^\.\//, ""), line: Number(line.slice(nul + 1, colon)), text: line.slice(colon + 1) });
    }
    const code = await exited;
    if (code === 2 && matches.length === 0 && /regex|parse error/i.test(stderr)) {
      throw new GaggleError("INVALID_ARGS", `pattern is not a regular expression ripgrep reads: ${stderr.trim()}`, {
        hint: "ripgrep's syntax is Rust's regex: no lookaround or backreferences",
      });
    }
  } catch (error) {
    if (error instanceof GaggleError) throw error;
    throw new GaggleError("EXECUTION_ERROR", `ripgrep (${rg}) failed: ${errorMessage(error)}`, { cause: error });
  } finally {
    search.signal?.removeEventListener("abort", stop);
  }
  return { matches, more };
}

/** The same search in JavaScript's regular expressions, for where ripgrep is not installed. */
export async function withJavaScript(search: Search): Promise<Found> {
  let regex: RegExp;
  try {
    regex = new RegExp(search.pattern, search.ignoreCase ? "i" : "");
  } catch (error) {
    throw new GaggleError("INVALID_ARGS", `pattern is not a regular expression: ${errorMessage(error)}`, {
      hint: "JavaScript's regular expression syntax",
    });
  }
  const include = search.include === undefined ? undefined : globRegExp(search.include);
  const byPath = search.include?.includes("/") ?? false;
  const files: Array<{ path: string; relative: string }> = [];
  await walkFiles(search.dir, {
    signal: search.signal,
    onFile: (path, relative) => {
      if (!include || include.test(byPath ? relative : relative.slice(relative.lastIndexOf("/") + 1))) files.push({ path, relative });
    },
  });
  const matches: Match[] = [];
  let more = false;
  let next = 0;
  const worker = async () => {
    while (next < files.length && !more && !search.signal?.aborted) {
      const file = files[next++]!;
      const found = await searchFile(file.path, regex);
      for (const { line, text } of found) {
        if (matches.length === search.max) {
          more = true;
          return;
        }
        matches.push({ file: file.relative, line, text });
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_FILES }, worker));
  return { matches, more };
}

async function searchFile(path: string, regex: RegExp): Promise<Array<{ line: number; text: string }>> {
  let data: Buffer;
  try {
    const handle = await open(path, "r");
    try {
      if ((await handle.stat()).size > MAX_FILE_BYTES) return [];
      data = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch {
    return [];
  }
  if (data.subarray(0, SNIFF_BYTES).includes(0)) return [];
  const whole = data.toString("utf8");
  // A line that matches is part of the whole text, where `^` and `$` match at line ends (the m flag): most files are
  // passed over with one test.
  if (!multiline(regex).test(whole)) return [];
  const found: Array<{ line: number; text: string }> = [];
  const lines = whole.split("\n");
  if (lines.at(-1) === "") lines.pop();
  lines.forEach((line, i) => {
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (regex.test(text)) found.push({ line: i + 1, text });
  });
  return found;
}

const multilines = new WeakMap<RegExp, RegExp>();

function multiline(regex: RegExp): RegExp {
  let wide = multilines.get(regex);
  if (!wide) {
    wide = new RegExp(regex.source, `${regex.flags}m`);
    multilines.set(regex, wide);
  }
  return wide;
}

function text(value: string) {
  return { content: [{ type: "text" as const, text: value }] };
}
