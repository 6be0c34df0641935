// .gitignore files as git reads them: each rule relative to its file's folder, the last rule that matches decides,
// `!` re-includes, a trailing `/` matches folders only, a pattern with a `/` is anchored to its folder.
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { globRegExp, type Glob } from "./glob.js";

interface Rule {
  /** The pattern as written, without its `!`, its leading and its trailing `/`. */
  pattern: string;
  regex: Glob;
  negate: boolean;
  folderOnly: boolean;
  /** Matched against the path from the rule's folder; otherwise against the name alone. */
  anchored: boolean;
}

/** The rules of one .gitignore, for the paths under `dir`. */
export interface IgnoreFile {
  dir: string;
  rules: Rule[];
}

/** A larger .gitignore is not read: nobody writes one this long, and its rules are parsed on the event loop. */
const MAX_IGNORE_BYTES = 1024 * 1024;

/**
 * The rules of `dir/.gitignore` (read through `at`, the folder's descriptor path, where the caller has one), or
 * undefined when it has none or none can be read. Only a regular file is read: a FIFO there would block, and a
 * symlink is not followed (as git does not follow one).
 */
export async function readIgnoreFile(dir: string, at = dir): Promise<IgnoreFile | undefined> {
  let text: string;
  let handle: FileHandle | undefined;
  try {
    handle = await open(join(at, ".gitignore"), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > MAX_IGNORE_BYTES) return undefined;
    text = await handle.readFile("utf8");
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => {});
  }
  const rules = text.split(/\r?\n/).flatMap((line) => {
    const rule = parseRule(line);
    return rule ? [rule] : [];
  });
  return rules.length > 0 ? { dir, rules } : undefined;
}

function parseRule(raw: string): Rule | undefined {
  let line = raw.replace(/(?<!\\)\s+$/, "");
  if (line === "" || line.startsWith("#")) return undefined;
  const negate = line.startsWith("!");
  if (negate) line = line.slice(1);
  else if (line.startsWith("\\!") || line.startsWith("\\#")) line = line.slice(1);
  const folderOnly = line.endsWith("/");
  if (folderOnly) line = line.slice(0, -1);
  const anchored = line.includes("/");
  if (line.startsWith("/")) line = line.slice(1);
  if (line === "") return undefined;
  return { pattern: line, regex: globRegExp(line), negate, folderOnly, anchored };
}

/**
 * Whether the entry at `path` (absolute, under every file's folder) is ignored by `files`, outermost first: the
 * last rule that matches decides.
 */
export function isIgnored(files: readonly IgnoreFile[], path: string, name: string, folder: boolean): boolean {
  let ignored = false;
  for (const file of files) {
    const relative = path.slice(file.dir.length + 1);
    for (const rule of file.rules) {
      if (rule.folderOnly && !folder) continue;
      if (rule.regex.test(rule.anchored ? relative : name)) ignored = !rule.negate;
    }
  }
  return ignored;
}

/** A pattern stripped of a folder path can branch at each `**`; past this many branches the rule is kept whole. */
const MAX_BRANCHES = 32;

/**
 * The rules of `file` (a parent's .gitignore) rewritten for the paths under `dir` below it, as lines of a .gitignore
 * whose folder is `dir`: ripgrep takes them as an ignore file (read from the search folder) in place of reading the
 * parents itself. An unanchored rule applies as it is; an anchored one loses the leading components that name the
 * way down to `dir`, and is dropped when it can only match outside `dir`.
 */
export function rulesFor(file: IgnoreFile, dir: string): string[] {
  const way = dir
    .slice(file.dir.length + 1)
    .split("/")
    .filter(Boolean);
  return file.rules.flatMap((rule) => {
    const bodies = rule.anchored ? stripped(rule.pattern.split("/"), way, 0) : [rule.pattern];
    const shown = bodies.length > MAX_BRANCHES ? [] : bodies;
    return shown.map((body) => `${rule.negate ? "!" : ""}${rule.anchored ? "/" : ""}${body}${rule.folderOnly ? "/" : ""}`);
  });
}

/** What is left of `pattern` once its leading components have matched `way`; a `**` may match none or several. */
function stripped(pattern: string[], way: string[], branches: number): string[] {
  if (branches > MAX_BRANCHES) return [];
  if (way.length === 0) return pattern.length === 0 ? [] : [pattern.join("/")];
  const [head, ...rest] = pattern;
  if (head === undefined) return [];
  if (head === "**") return [...stripped(rest, way, branches + 1), ...stripped(pattern, way.slice(1), branches + 1)];
  return globRegExp(head).test(way[0]!) ? stripped(rest, way.slice(1), branches) : [];
}
