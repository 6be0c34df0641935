// Owns the hooks other children use to follow goslings: turns starting and ending, Goose's notices, release.
import type { Gosling, PromptEntry } from "./gosling.js";
import { logger } from "../../shared/log.js";

/** What a watcher hears about every gosling; each method is optional. */
export interface GoslingWatcher {
  /** A prompt left the queue and its turn began (it is running now). */
  turnStarted?(gosling: Gosling, prompt: PromptEntry): void;
  /** A turn ended, however it ended; called after the gosling's own bookkeeping. */
  turnEnded?(gosling: Gosling, prompt: PromptEntry): void;
  /** A systemNotification Goose printed during a turn, e.g. "Exceeded auto-compact threshold of 80% ...". */
  notice?(gosling: Gosling, text: string): void;
  /** The gosling was released (by a tool, by idle_release_minutes, or when the goose child closed). */
  released?(gosling: Gosling): void;
}

type Event = keyof GoslingWatcher;

/** A watcher that throws is logged and skipped: a gosling's state machine never depends on one. */
export class GoslingWatchers {
  private readonly watchers = new Set<GoslingWatcher>();
  private readonly log = logger({ child: "goose", subsystem: "watchers" });

  add(watcher: GoslingWatcher): () => void {
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  emit<E extends Event>(event: E, ...args: Parameters<NonNullable<GoslingWatcher[E]>>): void {
    for (const watcher of this.watchers) {
      const handler = watcher[event] as ((...params: typeof args) => void) | undefined;
      try {
        handler?.apply(watcher, args);
      } catch (error) {
        this.log.error({ err: error, event }, "a gosling watcher failed");
      }
    }
  }
}
