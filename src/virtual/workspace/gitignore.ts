// .gitignore files as git reads them: each rule relative to its file's folder, the last rule that matches decides,
// `!` re-includes, a trailing `/` matches folders only, a pattern with a `/` is anchored to its folder.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { globRegExp } from "./glob.js";

interface Rule {
  regex: RegExp;
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

/** The rules of `dir/.gitignore`, or undefined when it has none (or none can be read). */
export function readIgnoreFile(dir: string): IgnoreFile | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, ".gitignore"), "utf8");
  } catch {
    return undefined;
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
  return { regex: globRegExp(line), negate, folderOnly, anchored };
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
