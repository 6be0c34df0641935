// View's find_section: the part of a text file around a piece of text, found without knowing the file's language:
// a Markdown section by its heading, elsewhere the first line holding the text and the block it opens.
import type { FileHandle } from "node:fs/promises";
import { GaggleError } from "../../shared/errors.js";
import { fsFailure } from "./fs-errors.js";
import type { LineStyle } from "./numbered.js";

/** Lines shown before the line that holds the text (outside Markdown), and after it when it opens no block. */
export const SECTION_CONTEXT = 3;
/** A block ends here at the latest: a file the rule misreads shows this many lines, not the rest of it. */
export const MAX_BLOCK_LINES = 200;
/** find_section reads the whole file: larger ones are refused. */
const MAX_SECTION_BYTES = 64 * 1024 * 1024;

/** Lines `start`..`end`, 1-based and inclusive; `what` says in a few words why these. */
export interface Section {
  start: number;
  end: number;
  what: string;
}

/**
 * The section of `lines` around the first occurrence of `needle` (either case) at or after line `from` (1-based).
 * In Markdown, a `#` heading that holds it wins: its section runs to the next heading of the same or a higher level
 * (headings inside fenced code are not headings); else the section holding the first line that holds it. Elsewhere
 * (and in Markdown before any heading), the line that holds it with SECTION_CONTEXT lines before and the block it opens
 * (see blockEnd), or SECTION_CONTEXT lines after when it opens none.
 */
export function findSection(lines: string[], needle: string, from: number, markdown: boolean): Section | undefined {
  const want = needle.toLowerCase();
  const holds = (line: string) => line.toLowerCase().includes(want);
  let at = -1;
  for (let i = Math.max(0, from - 1); i < lines.length && at === -1; i++) if (holds(lines[i]!)) at = i;
  if (at === -1) return undefined;
  if (markdown) {
    const all = headings(lines);
    const named = all.find((heading) => heading.index >= at && holds(heading.text));
    if (named) return { start: named.index + 1, end: sectionEnd(lines, all, named), what: `the section headed "${lines[named.index]!.trim()}"` };
    const under = all.findLast((heading) => heading.index <= at);
    if (under) {
      const what = `line ${at + 1} holds "${needle}", in the section headed "${lines[under.index]!.trim()}"`;
      return { start: under.index + 1, end: sectionEnd(lines, all, under), what };
    }
  }
  const block = blockEnd(lines, at);
  const opens = block.end > at;
  const end = opens ? block.end : Math.min(lines.length - 1, at + SECTION_CONTEXT);
  const how = opens ? `the block it opens${block.cut ? ` (cut at ${MAX_BLOCK_LINES} lines)` : ""}` : "the lines around it";
  return { start: Math.max(0, at - SECTION_CONTEXT) + 1, end: end + 1, what: `line ${at + 1} holds "${needle}"; shown with ${how}` };
}

interface Heading {
  index: number;
  level: number;
  text: string;
}

/** ATX headings (`## Title`), outside fenced code (``` or ~~~). */
function headings(lines: string[]): Heading[] {
  const found: Heading[] = [];
  let fence: string | undefined;
  lines.forEach((line, index) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      // A fence closes with the same character, at least as many times, and nothing after it.
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      return;
    }
    if (marker) {
      fence = marker;
      return;
    }
    const heading = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (heading) found.push({ index, level: heading[1]!.length, text: heading[2] ?? "" });
  });
  return found;
}

/** The last line (1-based) of a heading's section: before the next heading of its level or higher, blank lines left out. */
function sectionEnd(lines: string[], all: Heading[], heading: Heading): number {
  const next = all.find((other) => other.index > heading.index && other.level <= heading.level);
  let end = (next?.index ?? lines.length) - 1;
  while (end > heading.index && lines[end]!.trim() === "") end--;
  return end + 1;
}

/** Closes a block that indentation alone opened: Ruby's and Lua's `end`, the shell's `fi`, `done` and `esac`, a closing tag. */
const CLOSER = /^\s*(?:end\b|fi\b|done\b|esac\b|<\/|[}\])])/;

/**
 * Where the block line `at` opens ends (an index), told by indentation and brackets, whatever the language: it
 * goes on while brackets opened since `at` are still open, or lines are indented deeper than `at`'s (blank lines
 * inside it too); then a line back at `at`'s indentation that closes it (`}`, `end`, `fi`, `</div>`) is its last.
 * Brackets are counted as characters, in strings and comments too: the cap keeps a miscount from running on.
 */
export function blockEnd(lines: string[], at: number): { end: number; cut: boolean } {
  const base = indentOf(lines[at]!);
  let depth = bracketsOf(lines[at]!);
  let opened = false;
  let end = at;
  const last = Math.min(lines.length - 1, at + MAX_BLOCK_LINES - 1);
  for (let i = at + 1; i <= last; i++) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    const indent = indentOf(line);
    if (depth <= 0 && indent <= base) {
      if (opened && indent === base && CLOSER.test(line)) end = i;
      return { end, cut: false };
    }
    opened ||= indent > base;
    depth += bracketsOf(line);
    end = i;
  }
  return { end, cut: last < lines.length - 1 };
}

/** Columns of leading white space, a tab counted as four. */
function indentOf(line: string): number {
  let columns = 0;
  for (const char of line) {
    if (char === " ") columns++;
    else if (char === "\t") columns += 4;
    else break;
  }
  return columns;
}

/** Brackets opened on the line less those closed. */
function bracketsOf(line: string): number {
  let net = 0;
  for (const char of line) {
    if (char === "(" || char === "[" || char === "{") net++;
    else if (char === ")" || char === "]" || char === "}") net--;
  }
  return net;
}

/**
 * View's answer for find_section: the section's lines in `style`, at most `limit`, and a note saying which lines and
 * why. The search starts after `offset` lines (so an offset past one section finds the next).
 */
export async function viewSection(
  handle: FileHandle,
  path: string,
  size: number,
  needle: string,
  offset: number,
  limit: number,
  style: LineStyle,
): Promise<string> {
  if (size > MAX_SECTION_BYTES) {
    throw new GaggleError("LIMIT_REACHED", `${path} has ${size} bytes, over the ${MAX_SECTION_BYTES} find_section reads`, {
      hint: "find the line with GrepTool, then View it with offset and limit",
    });
  }
  let lines: string[];
  try {
    lines = (await handle.readFile("utf8")).split(/\r?\n/);
  } catch (error) {
    throw fsFailure(error, path);
  }
  if (lines.at(-1) === "") lines.pop();
  const section = findSection(lines, needle, offset + 1, /\.(md|markdown)$/i.test(path));
  if (!section) {
    throw new GaggleError("INVALID_ARGS", `"${needle}" was not found in ${path}${offset > 0 ? ` after line ${offset}` : ""}`, {
      hint: "find_section looks for the text in either case, within one line; GrepTool searches with a regular expression, across files",
    });
  }
  const last = Math.min(section.end, section.start + limit - 1);
  const shown: string[] = [];
  for (let n = section.start; n <= last; n++) shown.push(style(n, lines[n - 1]!));
  const note =
    last < section.end
      ? `[lines ${section.start}-${last} shown of the section's ${section.start}-${section.end} (limit ${limit}); ${section.what}. ` +
        `View without find_section, with offset ${last} and limit ${section.end - last}, shows the rest]`
      : `[lines ${section.start}-${section.end} of ${lines.length}: ${section.what}]`;
  return `${shown.join("\n")}\n${note}`;
}
