// Glob patterns as GlobTool, GrepTool's include, LS's ignore and .gitignore files write them, compiled to regular
// expressions that RE2 runs in linear time: a pattern such as **a**a**a**b never backtracks, whatever the path.
import { RE2JS } from "re2js";

/** Whether a whole path matches. */
export interface Glob {
  test(path: string): boolean;
}

const cache = new Map<string, Glob>();

/**
 * `pattern` against a whole `/`-separated path: `*` and `?` stay within one component, `**` spans any number of
 * them (`**\/x` also matches `x`), `[abc]`, `[!abc]` and `{a,b}` (nested too) as in a shell, `\` escapes.
 */
export function globRegExp(pattern: string): Glob {
  let glob = cache.get(pattern);
  if (!glob) {
    const regex = RE2JS.compile(translate(pattern), RE2JS.DOTALL);
    glob = { test: (path) => regex.matches(path) };
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, glob);
  }
  return glob;
}

export function globMatches(pattern: string, path: string): boolean {
  return globRegExp(pattern).test(path);
}

function translate(pattern: string): string {
  let out = "";
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === "\\" && i + 1 < pattern.length) {
      out += escape(pattern[++i]!);
    } else if (char === "*") {
      if (pattern[i + 1] === "*") {
        const atStart = i === 0 || pattern[i - 1] === "/";
        i++;
        if (atStart && pattern[i + 1] === "/") {
          out += "(?:[^/]*(?:/[^/]*)*/)?";
          i++;
        } else out += ".*";
      } else out += "[^/]*";
    } else if (char === "?") {
      out += "[^/]";
    } else if (char === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end === -1) out += "\\[";
      else {
        let body = pattern.slice(i + 1, end);
        const negated = body.startsWith("!") || body.startsWith("^");
        if (negated) body = body.slice(1);
        out += `[${negated ? "^/" : ""}${body.replace(/\\/g, "\\\\").replace(/]/g, "\\]")}]`;
        i = end;
      }
    } else if (char === "{") {
      depth++;
      out += "(?:";
    } else if (char === "}" && depth > 0) {
      depth--;
      out += ")";
    } else if (char === "," && depth > 0) {
      out += "|";
    } else out += escape(char);
  }
  return out + ")".repeat(depth);
}

function escape(char: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(char) ? `\\${char}` : char;
}
