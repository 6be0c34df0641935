// Owns "did you mean ...?": the nearest candidate to a misspelled name, by edit distance, else by a shared start or end.

/** Levenshtein edit distance (insertions, deletions, substitutions each cost 1). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/**
 * The candidate closest to `word`, or undefined when none is close enough to be a plausible typo:
 * the distance (ignoring case) must be at most max(2, floor(word.length / 3)). Ties go to the
 * candidate with the smaller case-sensitive distance, then to the earlier one. When no candidate is that
 * close, one that `word` begins or ends, or that begins or ends `word`, at a word boundary (`timeout` and
 * `timeout_ms`, `command` and `server_command`) is taken, the nearest in length first.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  return nearestByEdits(word, candidates) ?? nearestByAffix(word, candidates);
}

/** Shorter than this, a shared start or end says nothing (`ms`, `id`). */
const MIN_AFFIX = 3;

function nearestByAffix(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; extra: number } | undefined;
  for (const candidate of candidates) {
    const [short, long] = word.length <= candidate.length ? [word, candidate] : [candidate, word];
    if (short.length < MIN_AFFIX || short.length === long.length || !isAffix(short, long)) continue;
    const extra = long.length - short.length;
    if (!best || extra < best.extra) best = { candidate, extra };
  }
  return best?.candidate;
}

/** A word boundary in a name: before a separator, or before a capital (camelCase). */
const SEPARATOR = /[_\-.]/;
const CAPITAL = /[A-Z]/;

/** `short` (the shorter) begins or ends `long`, ignoring case, at a word boundary of `long`. */
function isAffix(short: string, long: string): boolean {
  const [lowerShort, lowerLong] = [short.toLowerCase(), long.toLowerCase()];
  const after = long[short.length] ?? "";
  const end = long.length - short.length;
  const prefix = lowerLong.startsWith(lowerShort) && (SEPARATOR.test(after) || CAPITAL.test(after));
  const suffix = lowerLong.endsWith(lowerShort) && (SEPARATOR.test(long[end - 1] ?? "") || CAPITAL.test(long[end] ?? ""));
  return prefix || suffix;
}

function nearestByEdits(word: string, candidates: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(word.length / 3));
  const lower = word.toLowerCase();
  let best: { candidate: string; distance: number; exact: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance > limit) continue;
    const exact = editDistance(word, candidate);
    if (!best || distance < best.distance || (distance === best.distance && exact < best.exact)) {
      best = { candidate, distance, exact };
    }
  }
  return best?.candidate;
}
