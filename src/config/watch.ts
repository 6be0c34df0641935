// Follows a config file while gaggle runs: each edit that changes what the file loads to, and each request to
// look again (SIGHUP), yields the loaded config or the error that kept it from loading.
import { watch, type FSWatcher } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { ConfigError } from "./errors.js";
import { validateConfigText } from "./load.js";
import type { GaggleConfig } from "./schema.js";

/** What the watcher reports: a config that differs from the last one reported, or why the file does not load. */
export interface ConfigFollower {
  /** `text` is the file's text the config was loaded from. */
  loaded(config: GaggleConfig, text: string): void;
  /** The file was read, but loads to the config already reported (touched, or a comment or a reformatting edited). */
  unchanged(text: string): void;
  /** `text` is the file's text that did not load; undefined when the file could not be read. */
  failed(error: ConfigError, text: string | undefined): void;
}

/**
 * Editors save in bursts (truncate then write, or write a temporary file and rename it over the old one), so a
 * file is read once its events have been quiet this long.
 */
const SETTLE_MS = 100;

/**
 * Watches the file's folder rather than the file, so that a save that replaces the file (a rename over it) is
 * seen as well as one that rewrites it. A load that gives the config already in force is reported as unchanged, not
 * loaded, so touching the file, or an editor's extra events, restart nothing.
 */
export class ConfigWatcher {
  private readonly watcher: FSWatcher;
  private timer: NodeJS.Timeout | undefined;
  private last: string;
  /** An edit failed to load since the last config reported. */
  private failedSince = false;
  /** Loads one at a time, in order: a later edit is read after the one before it is reported. */
  private loading: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    current: GaggleConfig,
    private readonly follower: ConfigFollower,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.last = JSON.stringify(current);
    const name = basename(path);
    this.watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
      if (file === null || file === name) this.soon();
    });
    // A folder that goes away ends the watch; gaggle goes on with the config it has.
    this.watcher.on("error", () => this.watcher.close());
  }

  /** Reads the file now (SIGHUP); resolves once it is read and reported. */
  reread(): Promise<void> {
    this.loading = this.loading.then(() => this.load());
    return this.loading;
  }

  close(): void {
    clearTimeout(this.timer);
    this.watcher.close();
  }

  private soon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reread(), SETTLE_MS).unref();
  }

  private async load(): Promise<void> {
    let config: GaggleConfig;
    let read: string | undefined;
    try {
      read = await readFile(this.path, "utf8");
      config = validateConfigText(read, this.path, this.env);
    } catch (error) {
      this.failedSince = true;
      this.follower.failed(asConfigError(this.path, error), read);
      return;
    }
    const text = JSON.stringify(config);
    const same = text === this.last;
    this.last = text;
    // A file that loads again as it was before a failed edit is reported too: the failure it ends must clear.
    if (!same || this.failedSince) this.follower.loaded(config, read);
    else this.follower.unchanged(read);
    this.failedSince = false;
  }
}

function asConfigError(path: string, error: unknown): ConfigError {
  if (error instanceof ConfigError) return error;
  const reason = error instanceof Error && "code" in error ? String(error.code) : String(error);
  return new ConfigError(
    path,
    [{ path: "", message: reason === "ENOENT" ? "config file not found" : `cannot read config file (${reason})` }],
    "unreadable",
    {
      cause: error,
    },
  );
}
