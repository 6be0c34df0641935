// Owns the small text formats the goose and team views share: durations, times, one-line excerpts (sizes: shared/byte-size.ts).

export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.floor((ms % 60_000) / 1000);
  if (minutes < 60) return `${minutes}m ${String(seconds).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

export function formatTime(date: Date): string {
  return date.toISOString();
}

/** Text on one line, its whitespace runs made single spaces, cut with "…" at `max` characters. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The start of a prompt on one line, in quotes: `"fix the bug in…"`. */
export function excerpt(text: string, max = 80): string {
  return JSON.stringify(oneLine(text, max));
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}
