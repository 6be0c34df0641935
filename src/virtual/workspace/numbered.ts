// Lines as `cat -n` prints them (the number right-aligned in six columns, a tab, the line), each cut at a length.

/** Longer lines are cut, with a note of what was left out. */
export const MAX_LINE_CHARS = 2000;

export function numbered(number: number, line: string): string {
  const cut = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}... [line cut: ${line.length - MAX_LINE_CHARS} more characters]` : line;
  return `${String(number).padStart(6)}\t${cut}`;
}

/** The lines `from`..`to` (1-based, inclusive) of `text`, numbered. */
export function numberedRange(lines: string[], from: number, to: number): string {
  const out: string[] = [];
  for (let n = Math.max(1, from); n <= Math.min(to, lines.length); n++) out.push(numbered(n, lines[n - 1]!));
  return out.join("\n");
}
