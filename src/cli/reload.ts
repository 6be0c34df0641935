// A serving gaggle follows its config file: each edit that loads is applied to the running children; one that does
// not is reported (log, clients, status) while the config in force stays.
import type { LevelWithSilent } from "pino";
import { ConfigWatcher, issuePlaces, type ConfigError, type GaggleConfig } from "../config/index.js";
import type { Gaggle, GatewayKey, KeptSetting } from "../gateway/gaggle.js";
import { errorMessage } from "../shared/errors.js";
import { lazyLogger, setLogLevel } from "../shared/log.js";

const log = lazyLogger({ subsystem: "reload" });

/** Whether the config file is the config in force, and why not when it is not: made before the gaggle that shows it. */
export class ConfigStanding {
  /** Settings of the last config applied that gaggle did not take, keeping the ones in force (see Reloaded.kept). */
  kept: KeptSetting[] = [];

  constructor(public problem: ConfigError | undefined = undefined) {}

  /** Why the file on disk is not the config in force, each problem a line; empty when it is. */
  errors(): string[] {
    return [...(this.problem ? this.problem.message.split("\n") : []), ...this.kept.map(({ key, reason }) => `${key}: ${reason}`)];
  }

  /** Where each of those problems is, without what it says (see issuePlaces). */
  places(): string[] {
    return [...(this.problem ? issuePlaces(this.problem) : []), ...this.kept.map(({ key }) => key)];
  }
}

export class Reloader {
  private readonly watcher: ConfigWatcher;
  /**
   * Told of each text of the file once it is applied (after its children are) or reported as not loading: the
   * file's text names the daemon that serves it, whether or not it loads.
   */
  private readonly followed: ((text: string) => void) | undefined;
  /** The log level was given on the command line: the file's does not replace it. */
  private readonly fixedLevel: boolean;
  /** How this gaggle is started again, for the settings that apply only then: it depends on how it serves. */
  private readonly restart: string;
  /**
   * The gateway keys otherwise taken only at start that this way of serving applies in place: gaggle started on a
   * file that did not load has nothing in force worth keeping, so the first config that loads brings them.
   */
  private readonly inPlace: readonly GatewayKey[];
  /** A config file has loaded since gaggle started (at its start or after). */
  private loaded: boolean;
  /** Reloads apply one at a time, in the order the file was read. */
  private applying: Promise<void> = Promise.resolve();

  /** `standing` holds the error of a config that did not load at start (gaggle then serves an empty one). */
  constructor(
    private readonly gaggle: Gaggle,
    private readonly standing: ConfigStanding,
    options: {
      fixedLevel?: boolean | undefined;
      followed?: ((text: string) => void) | undefined;
      restart: string;
      inPlace?: readonly GatewayKey[] | undefined;
    },
  ) {
    this.followed = options.followed;
    this.restart = options.restart;
    this.inPlace = options.inPlace ?? [];
    this.loaded = standing.problem === undefined;
    this.fixedLevel = options.fixedLevel === true;
    this.watcher = new ConfigWatcher(gaggle.config.path, gaggle.config, {
      loaded: (config, text) => void this.apply(config, text),
      unchanged: (text) => void this.unchanged(text),
      failed: (error, text) => void this.failed(error, text),
    });
  }

  /** Reads the file again (SIGHUP); resolves once what it held is applied or reported. */
  async reread(): Promise<void> {
    await this.watcher.reread();
    await this.applying;
  }

  close(): void {
    this.watcher.close();
  }

  /**
   * Runs `step` after the steps before it. A step that throws is logged and told to the clients, and the next
   * step still runs: one failed reload never stops gaggle following the file.
   */
  private inLine(step: () => void | Promise<void>): Promise<void> {
    this.applying = this.applying.then(step).catch((error: unknown) => {
      const message = `gaggle could not finish following the config file's last change: ${errorMessage(error)}; the next edit is applied as usual`;
      log.error({ err: error }, message);
      this.tellClients("error", message);
    });
    return this.applying;
  }

  private apply(config: GaggleConfig, text: string): Promise<void> {
    return this.inLine(async () => {
      const fixed = this.standing.problem !== undefined;
      this.standing.problem = undefined;
      // A level given on the command line stays; the file's otherwise.
      if (!this.fixedLevel) setLogLevel(config.gateway.logLevel as LevelWithSilent);
      const first = !this.loaded;
      this.loaded = true;
      const done = await this.gaggle.reload(config, first ? this.inPlace : []);
      this.standing.kept = done.kept;
      log.info({ added: done.added, removed: done.removed, changed: done.changed, fixed }, "config reloaded");
      this.followed?.(text);
      // The clients were told the file does not load; without this they would go on believing it.
      if (fixed) this.tellClients("info", "the config file loads again: it is applied, and the errors reported before are gone");
      if (done.needRestart.length > 0) {
        const verb = done.needRestart.length === 1 ? "takes" : "take";
        const message = `config reloaded, but ${done.needRestart.join(", ")} changed and ${verb} effect only when gaggle starts again (${this.restart})`;
        log.warn({ keys: done.needRestart }, message);
        this.tellClients("warning", message);
      }
      for (const { key, reason } of done.kept) {
        log.error({ key }, `config reloaded, but ${key} is not applied: ${reason}`);
        this.tellClients("error", `config reloaded, but ${key} is not applied: ${reason}`);
      }
    });
  }

  /** A comment or a reformatting changes no child, but it changes the text, which names the daemon of the file. */
  private unchanged(text: string): Promise<void> {
    return this.inLine(() => this.followed?.(text));
  }

  /** In line with the edits applied, so that an edit applied after it cannot clear its error. */
  private failed(error: ConfigError, text: string | undefined): Promise<void> {
    return this.inLine(() => {
      this.standing.problem = error;
      const message = `the edited config does not load, so gaggle keeps the one it runs; fix the file and it is applied:\n${error.message}`;
      log.error({ file: error.file }, message);
      this.tellClients("error", message);
      if (text !== undefined) this.followed?.(text);
    });
  }

  private tellClients(level: "info" | "warning" | "error", data: string): void {
    this.gaggle.hub.log("gaggle", { level, data }, []);
  }
}
