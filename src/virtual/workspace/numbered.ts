// Lines as `cat -n` prints them (the number right-aligned in six columns, a tab, the line), or plain, each cut at a length.

/** Longer lines are cut, with a note of what was left out. */
export const MAX_LINE_CHARS = 2000;

/** How View writes one line: numbered, or plain; `length` is the whole line's, when only its start was read. */
export type LineStyle = (number: number, line: string, length?: number) => string;

/** The line cut at MAX_LINE_CHARS, saying how much was left out. */
export function cutLine(line: string, length = line.length): string {
  return length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}... [line cut: ${length - MAX_LINE_CHARS} more characters]` : line;
}

export function numbered(number: number, line: string, length?: number): string {
  return `${String(number).padStart(6)}\t${cutLine(line, length)}`;
}

export function plain(_number: number, line: string, length?: number): string {
  return cutLine(line, length);
}

/** The entries `from`..`to` of `lines` (1-based, inclusive, clipped to those there are), numbered. */
export function numberedRange(lines: string[], from: number, to: number): string {
  const out: string[] = [];
  for (let n = Math.max(1, from); n <= Math.min(to, lines.length); n++) out.push(numbered(n, lines[n - 1]!));
  return out.join("\n");
}
