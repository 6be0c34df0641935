// Owns "did you mean ...?": the nearest candidate to a misspelled name by edit distance.

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
 * candidate with the smaller case-sensitive distance, then to the earlier one.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
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
