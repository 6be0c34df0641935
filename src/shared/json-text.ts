// Reads JSON text without parsing it again: how deep it nests, and a top-level member's text as it was written.

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

const QUOTE = 34;
const COMMA = 44;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const BACKSLASH = 92;
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
