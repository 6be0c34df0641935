// A limit every principal draws on together, and each principal's share of it: whether one more piece of work fits,
// and a refusal that names the limit and who holds it, counting other principals' work without naming them; and which
// kept records of finished work to forget when they pass their limit.

/** What one more piece of work is counted against. */
export interface SharedLimit<Key extends string = string> {
  /** Where the settings live, as the config spells it: `[agents.claude]`. */
  table: string;
  /** The key of the limit over every principal, and its value. */
  totalKey: Key;
  total: number;
  /** The key of each principal's share, and its value; undefined: a principal may take the whole limit. */
  shareKey: Key;
  share: number | undefined;
  /** What is counted, for `n` of them: `2 live sessions of agent "claude"`. */
  count: (n: number) => string;
}

/** Why one more piece of work does not fit: the message and the setting that refused it. */
export interface ShareRefusal<Key extends string = string> {
  message: string;
  key: Key;
  /** Whether the caller holds any of it: only then can the caller free a place. */
  holdsAny: boolean;
}

/**
 * The refusal of one more piece of work for `principal`, or undefined when it fits; `owners` names the principal of
 * each place held. Its share is checked first, so a principal at its share is told about its own work, never sent
 * to wait for other principals'.
 */
export function refusal<Key extends string>(limit: SharedLimit<Key>, owners: readonly string[], principal: string): ShareRefusal<Key> | undefined {
  const held = { mine: owners.filter((owner) => owner === principal).length, all: owners.length };
  const holdsAny = held.mine > 0;
  if (limit.share !== undefined && held.mine >= limit.share) {
    return {
      message: `you (${JSON.stringify(principal)}) hold ${limit.count(held.mine)}, the most ${limit.table} ${limit.shareKey} allows each principal (${limit.share})`,
      key: limit.shareKey,
      holdsAny,
    };
  }
  if (held.all < limit.total) return undefined;
  const others = held.all - held.mine;
  const whose = others === 0 ? "" : `: ${held.mine} of them yours, ${others} held by other principals`;
  return {
    message: `${limit.count(held.all)} at once, the most ${limit.table} ${limit.totalKey} allows (${limit.total})${whose}`,
    key: limit.totalKey,
    holdsAny,
  };
}

/**
 * What a refused principal can do. `free` says how it frees one of its own places; a principal that holds none waits
 * for the others, and its share is what keeps them from holding every place.
 */
export function refusalHint(limit: SharedLimit, refused: ShareRefusal, free: string): string {
  if (refused.holdsAny) return `${free}, or raise ${limit.table} ${refused.key}`;
  const shared = limit.share === undefined ? `, or set ${limit.table} ${limit.shareKey} so that no one principal holds them all` : "";
  return `wait for one to end, or raise ${limit.table} ${limit.totalKey}${shared}`;
}

/**
 * Which of `kept` (oldest first) to forget so that at most `limit` remain: each from the principal keeping the most
 * records, its oldest first, the older record breaking a tie; so one principal's flood of work pushes out its own
 * records, never another's. Only records `mayForget` allows go (a live session is counted, not forgotten). With one
 * principal it is the oldest of them.
 */
export function recordsToForget<T>(
  kept: readonly T[],
  limit: number,
  ownerOf: (record: T) => string,
  mayForget: (record: T) => boolean = () => true,
): T[] {
  /** Each principal's count of records, and those it may lose, oldest first, with each one's place in `kept`. */
  const byOwner = new Map<string, { count: number; forgettable: { record: T; at: number }[] }>();
  kept.forEach((record, at) => {
    const owner = ownerOf(record);
    let mine = byOwner.get(owner);
    if (!mine) byOwner.set(owner, (mine = { count: 0, forgettable: [] }));
    mine.count++;
    if (mayForget(record)) mine.forgettable.push({ record, at });
  });
  const forget: T[] = [];
  for (let excess = kept.length - Math.max(0, limit); excess > 0; excess--) {
    let most: { count: number; forgettable: { record: T; at: number }[] } | undefined;
    for (const mine of byOwner.values()) {
      const next = mine.forgettable[0];
      if (next === undefined) continue;
      if (!most || mine.count > most.count || (mine.count === most.count && next.at < most.forgettable[0]!.at)) most = mine;
    }
    if (!most) break;
    most.count--;
    forget.push(most.forgettable.shift()!.record);
  }
  return forget;
}
