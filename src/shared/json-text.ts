// Reads JSON text without parsing it again: how deep it nests, and a top-level member's text as it was written; and
// JSONC text as JSON of the same shape.

/**
 * Whether valid JSON `text` nests arrays and objects more than `limit` deep. A loop, not recursion, so any depth
 * is measured without a deep stack; brackets inside strings do not count.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  // Each level takes two characters, so a short text cannot be too deep.
  if (text.length <= 2 * limit) return false;
  let depth = 0;
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char === QUOTE) at = stringEnd(text, at);
    else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** JSON text of a string; one of printable ASCII without quote or backslash is written as it is, without JSON.stringify. */
export function jsonString(text: string): string {
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char < 0x20 || char > 0x7e || char === QUOTE || char === BACKSLASH) return JSON.stringify(text);
  }
  return `"${text}"`;
}

/**
 * The text of the number written as the value of the top-level member `name` of the valid JSON object `text`
 * (the last such member, the one JSON.parse keeps), or undefined when there is none: JSON.parse rounds an
 * integer beyond 2^53, and an answer must carry the id as it was sent.
 */
export function topLevelNumberText(text: string, name: string): string | undefined {
  let found: string | undefined;
  let depth = 0;
  let expectKey = false;
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char === QUOTE) {
      const end = stringEnd(text, at);
      if (depth === 1 && expectKey) {
        expectKey = false;
        if (JSON.parse(text.slice(at, end + 1)) === name) {
          NUMBER_AFTER_COLON.lastIndex = end + 1;
          const match = NUMBER_AFTER_COLON.exec(text);
          found = match ? match[1] : undefined;
        }
      }
      at = end;
    } else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      depth++;
      expectKey = depth === 1;
    } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) depth--;
    else if (char === COMMA && depth === 1) expectKey = true;
  }
  return found;
}

/**
 * JSONC text (JSON with `//` and `/* *\/` comments and trailing commas, as VS Code and the clients after it read and
 * write their settings) as JSON of the same length: each comment and each trailing comma becomes spaces, its line
 * breaks kept, so that an offset, a line and a column name the same place in both. One pass, no backtracking; a
 * block comment never closed is told by its offset instead. A comma after nothing (`[,]`, `{"a": 1,,}`) is left, for
 * the JSON parser to refuse.
 */
export function jsoncAsJson(text: string): { json: string; unclosedCommentAt?: number } {
  const blanks: Array<[number, number]> = [];
  let comma = -1;
  // The last character outside strings, comments and whitespace: a comma after an opening or a comma is no trailing one.
  let previous = OPEN_BRACE;
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char === SLASH && text.charCodeAt(at + 1) === SLASH) {
      const end = text.indexOf("\n", at);
      const stop = end === -1 ? text.length : end;
      blanks.push([at, stop]);
      at = stop - 1;
      continue;
    }
    if (char === SLASH && text.charCodeAt(at + 1) === STAR) {
      const end = text.indexOf("*/", at + 2);
      if (end === -1) return { json: text, unclosedCommentAt: at };
      blanks.push([at, end + 2]);
      at = end + 1;
      continue;
    }
    if (isJsonSpace(char)) continue;
    if (char === COMMA) comma = previous === COMMA || previous === OPEN_BRACE || previous === OPEN_BRACKET ? -1 : at;
    else if ((char === CLOSE_BRACE || char === CLOSE_BRACKET) && comma !== -1) {
      blanks.push([comma, comma + 1]);
      comma = -1;
    } else comma = -1;
    if (char === QUOTE) at = stringEnd(text, at);
    previous = char;
  }
  if (blanks.length === 0) return { json: text };
  // A trailing comma is found after the comments that follow it.
  blanks.sort((one, other) => one[0] - other[0]);
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of blanks) {
    parts.push(text.slice(from, start), text.slice(start, end).replace(/[^\r\n]/g, " "));
    from = end;
  }
  parts.push(text.slice(from));
  return { json: parts.join("") };
}

export const QUOTE = 34;
export const COMMA = 44;
export const COLON = 58;
const SLASH = 47;
const STAR = 42;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
export const OPEN_BRACE = 123;
export const CLOSE_BRACE = 125;
const BACKSLASH = 92;

/** Whether `char` is whitespace as JSON has it: space, tab, line feed, carriage return. */
export function isJsonSpace(char: number): boolean {
  return char === 32 || char === 9 || char === 10 || char === 13;
}
const NUMBER_AFTER_COLON = /\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/y;

/** The index of the quote that closes the string opening at `start`, in valid JSON. */
function stringEnd(text: string, start: number): number {
  let end = start;
  for (;;) {
    end = text.indexOf('"', end + 1);
    // Not valid JSON after all: an unterminated string runs to the end.
    if (end === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
  }
}
