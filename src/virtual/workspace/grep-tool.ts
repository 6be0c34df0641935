// GrepTool: the lines matching a regular expression in the files under a folder (with lines of context on request),
// with ripgrep when it is on PATH and a JavaScript search otherwise; binary, hidden and ignored files skipped, the
// answer capped with a note.
import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { lstat, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { RE2JS } from "re2js";
import { z } from "zod";
import { GaggleError, errorMessage } from "../../shared/errors.js";
import { textResult } from "../../shared/tool-results.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import { SNIFF_BYTES } from "./file-kind.js";
import { globRegExp } from "./glob.js";
import { searchFolder } from "./glob-tool.js";
import { descriptorPath } from "./opened.js";
import type { Workspace } from "./place.js";
import { readIgnoreFile, rulesFor } from "./gitignore.js";
import { ancestorsOf, VCS_FOLDERS, walkFiles } from "./walk.js";

/** Longer lines are cut in the answer. */
const MAX_LINE_CHARS = 500;
/** Larger files are not searched by the JavaScript search (ripgrep searches them). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Files searched at once by the JavaScript search. */
const PARALLEL_FILES = 16;
/** The most lines of context a call may ask for on each side of a match. */
const MAX_CONTEXT = 20;

export interface Match {
  /** Relative to the search folder. */
  file: string;
  line: number;
  text: string;
  /** A line shown around a match (context), not itself matching. */
  context?: boolean;
}

export interface Search {
  pattern: string;
  ignoreCase: boolean;
  /** A glob of names (or, with a `/`, of paths from the search folder) to search. */
  include: string | undefined;
  dir: string;
  /** Matching lines beyond this are not collected: the search stops and says more were found. Context lines do not count. */
  max: number;
  /** Lines of context before and after each match. */
  context: number;
  /** Also search inside version-control folders (.git, .svn, .hg). */
  vcs: boolean;
  signal: AbortSignal | undefined;
  /** A folder (its real path) lies under the roots: only there are parents' .gitignore files read. */
  inside(real: string): boolean;
}

export interface Found {
  /** Matching lines and their context lines, each file's in order. */
  matches: Match[];
  more: boolean;
  /** What the search could not read (ripgrep's complaints: a folder it may not open, a file gone meanwhile). */
  problems?: string;
  /** Lines the JavaScript search searched only in their first characters, being longer. */
  cut?: number;
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
      `.gitignore files leave out are skipped (no_ignore_vcs: true searches .git, .svn and .hg folders too). Answers ` +
      "file:line:text, files newest first; context adds lines before and after each match as grep -C does (file-line-text, " +
      `-- between groups that do not touch). At most ${maxResults} matching lines (context lines not counted), with a note ` +
      "when more matched.",
    input: z.strictObject({
      pattern: z.string().min(1).describe("The regular expression to search for"),
      path: z.string().min(1).describe("The folder to search (default: the shell's working directory)").optional(),
      include: z.string().min(1).describe('A glob of file names to search (e.g. "*.js", "*.{ts,tsx}")').optional(),
      ignore_case: z.boolean().describe("Match letters in either case (default false)").optional(),
      context: z.int().min(0).max(MAX_CONTEXT).describe(`Lines to show before and after each match, 0 to ${MAX_CONTEXT} (default 0)`).optional(),
      no_ignore_vcs: z
        .boolean()
        .describe("Also search inside version-control folders (.git, .svn, .hg), skipped otherwise (default false)")
        .optional(),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ pattern, path, include, ignore_case = false, context = 0, no_ignore_vcs = false }, ctx) => {
      const place = await workspace.place(ctx);
      const dir = await searchFolder(place, path);
      const search: Search = {
        pattern,
        ignoreCase: ignore_case,
        include,
        dir,
        max: maxResults,
        context,
        vcs: no_ignore_vcs,
        signal: ctx.cancel?.signal,
        inside: place.inside,
      };
      const found = rg ? await withRipgrep(rg, search) : await withJavaScript(search);
      const matching = found.matches.filter((match) => !match.context);
      const problems =
        (found.problems ? `\n[not everything could be searched; ripgrep said: ${found.problems}]` : "") +
        (found.cut
          ? `\n[${found.cut} lines longer than ${MAX_SEARCHED_LINE_CHARS} characters were searched in their first ${MAX_SEARCHED_LINE_CHARS} only]`
          : "");
      if (matching.length === 0) return textResult(`No lines under ${dir} match ${pattern}${problems}`);
      const lines = await newestFirst(dir, found.matches, context);
      const files = new Set(matching.map((match) => match.file)).size;
      const note = found.more
        ? `\n[more lines matched past the first ${maxResults} ([virtual.workspace] max_results); narrow the pattern, path or include]`
        : "";
      const head = `${matching.length}${found.more ? "+" : ""} matching lines in ${files} files under ${dir}`;
      return textResult(`${head}:\n${lines.join("\n")}${note}${problems}`);
    },
  });
}

/**
 * file:line:text, the files most recently changed first, each file's lines in order; with context, grep -C's form:
 * context lines file-line-text, and `--` between groups of lines that do not touch (a new file starts a group). A
 * context line is kept only near a matching line that is shown: the search stops at max, maybe past a match's context.
 */
async function newestFirst(dir: string, lines: Match[], context: number): Promise<string[]> {
  const byFile = new Map<string, Match[]>();
  for (const line of lines) {
    const own = byFile.get(line.file);
    if (own) own.push(line);
    else byFile.set(line.file, [line]);
  }
  const times = new Map(
    await Promise.all([...byFile.keys()].map(async (file) => [file, (await lstat(`${dir}/${file}`).catch(() => undefined))?.mtimeMs ?? 0] as const)),
  );
  const files = [...byFile.keys()].sort((a, b) => times.get(b)! - times.get(a)! || (a < b ? -1 : 1));
  const out: string[] = [];
  for (const file of files) {
    const own = byFile.get(file)!.sort((a, b) => a.line - b.line);
    const near = new Set<number>();
    for (const hit of own) if (!hit.context) for (let n = hit.line - context; n <= hit.line + context; n++) near.add(n);
    let previous: number | undefined;
    for (const { line, text, context: around } of own) {
      if (around && !near.has(line)) continue;
      if (context > 0 && out.length > 0 && (previous === undefined || line > previous + 1)) out.push("--");
      const mark = around ? "-" : ":";
      out.push(`${file}${mark}${line}${mark}${cut(text)}`);
      previous = line;
    }
  }
  return out;
}

function cut(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}... [line cut]` : line;
}

/** What follows the NUL after the path in rg's lines: the line number, then `:` (a match) or `-` (context). */
const LINE_NUMBER = /(\d+)([:-])/y;

/** ripgrep, told to read .gitignore files outside git repositories too, and nothing but them and its own ignore files. */
export async function withRipgrep(rg: string, search: Search): Promise<Found> {
  const args = ["--no-config", "--no-heading", "--with-filename", "--line-number", "--null", "--color", "never", "--no-require-git"];
  args.push("--no-ignore-global", "--no-ignore-exclude", "--max-columns", String(MAX_LINE_CHARS * 2), "--max-columns-preview");
  if (search.ignoreCase) args.push("--ignore-case");
  if (search.context > 0) args.push("--context", String(search.context));
  // rg reads no parent's ignore files itself (one outside the roots could hide files, and a FIFO there would hang it):
  // the parents' .gitignore files under the roots are handed over, rewritten for the search folder. rg enters a
  // hidden folder such a file whitelists. Not /dev/stdin: Node's stdin pipes are sockets, which it cannot open. As
  // --ignore-file rules, the search folder's own .gitignore files still overrule them, as they do the JavaScript walk's.
  args.push("--no-ignore-parent");
  const parents = (await Promise.all(ancestorsOf(search.dir, search.inside).map((folder) => readIgnoreFile(folder)))).flatMap((file) =>
    file ? rulesFor(file, search.dir) : [],
  );
  const lines = [...parents, ...(search.vcs ? VCS_FOLDERS.map((folder) => `!${folder}/`) : [])];
  const ignores = lines.length > 0 ? await ignoreFile(lines) : undefined;
  if (ignores) args.push("--ignore-file", ignores.path);
  // A file type, not --glob: rg lets a --glob override .gitignore, a type leaves it in force. A type matches names only.
  if (search.include?.includes("/")) args.push("--glob", search.include);
  else if (search.include) args.push("--type-add", `gaggleinclude:${search.include}`, "--type", "gaggleinclude");
  args.push("--regexp", search.pattern, "--", ".");
  const child = spawn(rg, args, { cwd: search.dir, stdio: ["ignore", "pipe", "pipe"] });
  const matches: Match[] = [];
  let matching = 0;
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
    // path NUL number, then `:` and a matching line or `-` and a context line; `--` lines between groups have no NUL.
    for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) {
      const nul = line.indexOf("\0");
      LINE_NUMBER.lastIndex = nul + 1;
      const number = nul === -1 ? null : LINE_NUMBER.exec(line);
      if (!number) continue;
      const context = number[2] === "-";
      if (!context && matching === search.max) {
        more = true;
        stop();
        break;
      }
      if (!context) matching++;
      const file = line.slice(0, nul).replace(/^\.\//, "");
      matches.push({ file, line: Number(number[1]), text: line.slice(LINE_NUMBER.lastIndex), ...(context && { context }) });
    }
    const code = await exited;
    if (code === 2 && matches.length === 0 && /regex|parse error/i.test(stderr)) {
      throw new GaggleError("INVALID_ARGS", `pattern is not a regular expression ripgrep reads: ${stderr.trim()}`, {
        hint: "ripgrep's syntax is Rust's regex: no lookaround or backreferences",
      });
    }
    // Exit status 2 is an error beside whatever was found: said with the answer, never taken for "no match".
    if (code === 2 && stderr.trim() !== "") return { matches, more, problems: stderr.trim().split("\n").slice(0, 5).join("; ") };
  } catch (error) {
    if (error instanceof GaggleError) throw error;
    throw new GaggleError("EXECUTION_ERROR", `ripgrep (${rg}) failed: ${errorMessage(error)}`, { cause: error });
  } finally {
    search.signal?.removeEventListener("abort", stop);
    await ignores?.remove();
  }
  return { matches, more };
}

/** An ignore file of one call's own holding `lines`, removed after the call. */
async function ignoreFile(lines: string[]): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "gaggle-rg-"));
  const path = join(dir, "rules.ignore");
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    await writeFile(path, lines.map((line) => `${line}\n`).join(""));
  } catch (error) {
    await remove();
    throw error;
  }
  return { path, remove };
}

/**
 * The same search in JavaScript, for where ripgrep is not installed: the pattern runs in RE2 (re2js), whose syntax is
 * ripgrep's own family and whose time is linear in the text, so no pattern can stall the event loop by backtracking.
 */
export async function withJavaScript(search: Search): Promise<Found> {
  let regex: Pattern;
  try {
    regex = pattern(search.pattern, search.ignoreCase);
  } catch (error) {
    throw new GaggleError("INVALID_ARGS", `pattern is not a regular expression: ${errorMessage(error)}`, {
      hint: "RE2's syntax, as ripgrep's (Rust's regex): no lookaround or backreferences",
    });
  }
  const include = search.include === undefined ? undefined : globRegExp(search.include);
  const byPath = search.include?.includes("/") ?? false;
  const files: Array<{ path: string; relative: string }> = [];
  await walkFiles(search.dir, {
    signal: search.signal,
    vcs: search.vcs,
    inside: search.inside,
    onFile: (path, relative) => {
      if (!include || include.test(byPath ? relative : relative.slice(relative.lastIndexOf("/") + 1))) files.push({ path, relative });
    },
  });
  const matches: Match[] = [];
  let matching = 0;
  let more = false;
  let next = 0;
  let cut = 0;
  const worker = async () => {
    while (next < files.length && !more && !search.signal?.aborted) {
      const file = files[next++]!;
      const found = await searchFile(file.path, regex, search.context, (lines) => (cut += lines));
      for (const { line, text, context } of found) {
        if (!context && matching === search.max) {
          more = true;
          return;
        }
        if (!context) matching++;
        matches.push({ file: file.relative, line, text, ...(context && { context }) });
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_FILES }, worker));
  return cut === 0 ? { matches, more } : { matches, more, cut };
}

/** A user's pattern compiled twice: for one line, and for many lines at once (`^` and `$` at each line's ends). */
interface Pattern {
  line: RE2JS;
  lines: RE2JS;
}

function pattern(source: string, ignoreCase: boolean): Pattern {
  const flags = ignoreCase ? RE2JS.CASE_INSENSITIVE : 0;
  return { line: RE2JS.compile(source, flags), lines: RE2JS.compile(source, flags | RE2JS.MULTILINE) };
}

/**
 * Text tested at once before the event loop gets a turn; a piece that matches is then tested line by line. Linear
 * time still grows with the text (a pattern like (a+)+$ costs RE2 about 0.2 µs a character), so a turn stays short.
 */
const PIECE_CHARS = 64 * 1024;
/** A longer line is searched in its first PIECE_CHARS characters only, and the answer says how many were cut. */
const MAX_SEARCHED_LINE_CHARS = PIECE_CHARS;

/** The file's matching lines, and `context` lines around each, in order. */
async function searchFile(path: string, regex: Pattern, context: number, onCut: (lines: number) => void): Promise<Array<Omit<Match, "file">>> {
  let data: Buffer;
  try {
    // Not following a symlink swapped in since the walk, not waiting on a FIFO, and only where the walk found it.
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const stat = await handle.stat();
      const real = descriptorPath(handle.fd);
      if (!stat.isFile() || stat.size > MAX_FILE_BYTES || (real !== undefined && real !== path)) return [];
      data = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch {
    return [];
  }
  if (data.subarray(0, SNIFF_BYTES).includes(0)) return [];
  const lines = data
    .toString("utf8")
    .split("\n")
    .map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  if (lines.at(-1) === "") lines.pop();
  const { hits, cut } = await matchingLines(lines, regex);
  onCut(cut);
  if (context === 0) return hits.map((i) => ({ line: i + 1, text: lines[i]! }));
  const isHit = new Set(hits);
  const found: Array<Omit<Match, "file">> = [];
  let next = 0; // the first line not yet in `found`: groups that overlap or touch are merged
  for (const hit of hits) {
    for (let i = Math.max(next, hit - context); i <= Math.min(lines.length - 1, hit + context); i++) {
      found.push({ line: i + 1, text: lines[i]!, ...(!isHit.has(i) && { context: true }) });
    }
    next = Math.max(next, hit + context + 1);
  }
  return found;
}

/**
 * The indexes of the lines that match, found a piece of lines at a time: each piece is tested whole first (most are
 * passed over with that one test), and the event loop gets a turn between pieces, however large the file.
 */
async function matchingLines(lines: string[], regex: Pattern): Promise<{ hits: number[]; cut: number }> {
  const hits: number[] = [];
  let cut = 0;
  const searched = (line: string) => (line.length > MAX_SEARCHED_LINE_CHARS ? line.slice(0, MAX_SEARCHED_LINE_CHARS) : line);
  for (let first = 0; first < lines.length;) {
    let last = first;
    for (let chars = 0; last < lines.length && chars < PIECE_CHARS; last++) {
      chars += Math.min(lines[last]!.length, MAX_SEARCHED_LINE_CHARS) + 1;
      if (lines[last]!.length > MAX_SEARCHED_LINE_CHARS) cut++;
    }
    if (regex.lines.test(lines.slice(first, last).map(searched).join("\n"))) {
      for (let i = first; i < last; i++) if (regex.line.test(searched(lines[i]!))) hits.push(i);
    }
    first = last;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { hits, cut };
}
