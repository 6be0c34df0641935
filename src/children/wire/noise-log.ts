// What a child gets wrong on the wire (progress for unknown tokens, answers to ids never sent, unreadable lines),
// logged at a bounded rate: a flood of it must cost a few lines of log, never one stack trace per message.
import type { Logger } from "../../shared/log.js";

/** Kinds told one by one; past that, every new kind only counts. */
const MAX_KINDS = 32;

export class NoiseLog {
  /** Kinds already told: each new one is logged once, at once, with its message. */
  private readonly told = new Set<string>();
  /** Since the last summary: how many of each kind were not logged. */
  private readonly quiet = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly what: string,
    private readonly windowMs = 10_000,
  ) {}

  /** `said` is the log message for the first of a kind (by default, what this log is of), `fields` go with it. */
  note(error: Error, said?: string, fields: Record<string, unknown> = {}): void {
    const kind = kindOf(error.message);
    if (!this.told.has(kind) && this.told.size < MAX_KINDS) {
      this.told.add(kind);
      const more = `more like it are counted, and summarised every ${this.windowMs / 1000} s`;
      if (said === undefined) this.log.warn({ reason: error.message, ...fields }, `${this.what} (${more})`);
      else this.log.warn({ reason: error.message, ...fields, more }, said);
      return;
    }
    this.quiet.set(kind, (this.quiet.get(kind) ?? 0) + 1);
    this.timer ??= setTimeout(() => this.summarise(), this.windowMs).unref();
  }

  /** Logs what was counted since the last summary, if anything; also called when the session ends. */
  summarise(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.quiet.size === 0) return;
    const counts = Object.fromEntries([...this.quiet].sort((a, b) => b[1] - a[1]).slice(0, 10));
    const total = [...this.quiet.values()].reduce((sum, count) => sum + count, 0);
    this.quiet.clear();
    this.log.warn({ counts, total }, `${total} more ${this.what}, not logged one by one`);
  }
}

/** A message with what varies between repeats (numbers, quoted text, ids) taken out, and bounded. */
function kindOf(message: string): string {
  return message
    .slice(0, 200)
    .replace(/"[^"]*"|'[^']*'/g, "…")
    .replace(/\d+/g, "N");
}
