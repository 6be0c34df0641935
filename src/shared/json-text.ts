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

/**
 * Where the JSON value at `at` ends (the index after it), read as JSON.parse reads it and building nothing; -1 when the
 * text there is no JSON value, or opens more than `depthLeft` nested arrays and objects. Whitespace before the value is
 * skipped, none after it. Recursion one level a container, so `depthLeft` bounds the stack too.
 */
export function jsonValueEnd(text: string, at: number, depthLeft: number): number {
  at = skipJsonSpace(text, at);
  const char = codeAt(text, at);
  if (char === QUOTE) return checkedStringEnd(text, at);
  if (char === OPEN_BRACE || char === OPEN_BRACKET) return depthLeft > 0 ? containerEnd(text, at, depthLeft - 1) : -1;
  if (char === MINUS || (char >= ZERO && char <= NINE)) return numberEnd(text, at);
  const literal = char === LOWER_T ? "true" : char === LOWER_F ? "false" : char === LOWER_N ? "null" : undefined;
  return literal !== undefined && text.startsWith(literal, at) ? at + literal.length : -1;
}

/** The index of the first character at or after `at` that is not JSON whitespace (the text's length if none). */
export function skipJsonSpace(text: string, at: number): number {
  while (isJsonSpace(codeAt(text, at))) at++;
  return at;
}

/**
 * Where the string opening at `at` ends (the index after its closing quote), when a string opens there written with no
 * escape and no character JSON strings must escape; else -1. Such a string's text between its quotes is its value.
 */
export function plainStringEnd(text: string, at: number): number {
  if (codeAt(text, at) !== QUOTE) return -1;
  const length = text.length;
  for (let i = at + 1; i < length; i++) {
    const char = text.charCodeAt(i);
    if (char === QUOTE) return i + 1;
    if (char < SPACE || char === BACKSLASH) return -1;
  }
  return -1;
}

/** The array or object opening at `at`, its members' values each at most `depthLeft` deep: see jsonValueEnd. */
function containerEnd(text: string, at: number, depthLeft: number): number {
  const isObject = codeAt(text, at) === OPEN_BRACE;
  const close = isObject ? CLOSE_BRACE : CLOSE_BRACKET;
  at = skipJsonSpace(text, at + 1);
  if (codeAt(text, at) === close) return at + 1;
  for (;;) {
    if (isObject) {
      if (codeAt(text, at) !== QUOTE) return -1;
      at = checkedStringEnd(text, at);
      if (at < 0) return -1;
      at = skipJsonSpace(text, at);
      if (codeAt(text, at) !== COLON) return -1;
      at++;
    }
    at = jsonValueEnd(text, at, depthLeft);
    if (at < 0) return -1;
    at = skipJsonSpace(text, at);
    const next = codeAt(text, at);
    if (next === close) return at + 1;
    if (next !== COMMA) return -1;
    at = skipJsonSpace(text, at + 1);
  }
}

/** The string opening at `at`, its escapes checked: see jsonValueEnd. */
function checkedStringEnd(text: string, at: number): number {
  const length = text.length;
  const looped = at + LOOPED_CHARS;
  for (let i = at + 1; i < length; i++) {
    if (i >= looped) {
      STRING_RUN.lastIndex = i;
      STRING_RUN.test(text);
      i = STRING_RUN.lastIndex;
      if (i === length) return -1;
    }
    const char = text.charCodeAt(i);
    if (char === QUOTE) return i + 1;
    if (char < SPACE) return -1;
    if (char === BACKSLASH) {
      const escaped = codeAt(text, ++i);
      if (escaped === LOWER_U) {
        for (const end = i + 4; i < end;) if (!isHexDigit(codeAt(text, ++i))) return -1;
      } else if (!SIMPLE_ESCAPES.includes(escaped)) return -1;
    }
  }
  return -1;
}

/** The number starting at `at`, as JSON writes numbers (no leading zeros, no "+", digits either side of a point). */
function numberEnd(text: string, at: number): number {
  if (codeAt(text, at) === MINUS) at++;
  const first = codeAt(text, at);
  if (first === ZERO) at++;
  else if (first > ZERO && first <= NINE) at = digitsEnd(text, at + 1);
  else return -1;
  if (codeAt(text, at) === DOT) {
    const end = digitsEnd(text, at + 1);
    if (end === at + 1) return -1;
    at = end;
  }
  const exponent = codeAt(text, at);
  if (exponent === LOWER_E || exponent === UPPER_E) {
    const sign = codeAt(text, ++at);
    if (sign === PLUS || sign === MINUS) at++;
    const end = digitsEnd(text, at);
    if (end === at) return -1;
    at = end;
  }
  return at;
}

function digitsEnd(text: string, at: number): number {
  for (let char = codeAt(text, at); char >= ZERO && char <= NINE; char = codeAt(text, ++at));
  return at;
}

/**
 * The character at `at`, -1 past the end: the scans above read one past a value's end, and a read past a string's end
 * makes V8 give up the inlined read for a call at every character.
 */
export function codeAt(text: string, at: number): number {
  return at < text.length ? text.charCodeAt(at) : -1;
}

function isHexDigit(char: number): boolean {
  return (char >= ZERO && char <= NINE) || (char >= 65 && char <= 70) || (char >= 97 && char <= 102);
}

/**
 * A string's characters up to its end or its next escape, or a character it must escape: read by the regular
 * expression engine past the first LOOPED_CHARS of a string, where a loop in JavaScript reads a long string several
 * times slower than JSON.parse does, and the engine's call costs more than a short string's loop.
 */
// eslint-disable-next-line no-control-regex -- the characters JSON strings must escape are what it stops at
const STRING_RUN = /[^"\\\x00-\x1f]*/y;
const LOOPED_CHARS = 32;
const SPACE = 32;
const PLUS = 43;
const MINUS = 45;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const UPPER_E = 69;
const LOWER_E = 101;
const LOWER_F = 102;
const LOWER_N = 110;
const LOWER_T = 116;
const LOWER_U = 117;
/** What may follow a backslash in a JSON string, "u" aside: `"`, `\`, `/`, b, f, n, r, t. */
const SIMPLE_ESCAPES = [QUOTE, BACKSLASH, SLASH, 98, 102, 110, 114, 116];

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
