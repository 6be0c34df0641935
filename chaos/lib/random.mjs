// Owns the chaos run's randomness: one seeded generator per attack, so a run can be repeated input for input.

/** A small seeded generator (the mix the policy corpus test uses); `int(n)` is in [0, n). */
export function seeded(seed) {
  let state = seed | 0;
  const int = (n) => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
    return (state >>> 0) % n;
  };
  return {
    int,
    pick: (items) => items[int(items.length)],
    chance: (p) => int(1_000_000) < p * 1_000_000,
    /** An index into `weights`, each chosen in proportion to its weight. */
    weighted: (weights) => {
      let roll = int(weights.reduce((sum, w) => sum + w, 0));
      for (let i = 0; i < weights.length; i++) if ((roll -= weights[i]) < 0) return i;
      return weights.length - 1;
    },
  };
}

/** Characters that trip code which assumes plain text: controls, direction overrides, joiners, a BOM, a lone surrogate. */
export const ODD_TEXT = [
  "\u0000",
  "\u202e",
  "\u200b",
  "\u200d",
  "\ufeff",
  "\ud800",
  "\udfff",
  "e\u0301",
  "🦆",
  "\u2028",
  "\u0085",
  "\x1b[31m",
  "\\",
  '"',
  "${",
  "%s",
  "\r",
];
