// What each child offered when it last ran (its tools, resources, resource templates and prompts), kept under the
// state dir so that a gateway can list them before the child runs again. An entry belongs to the child's
// definition: its fingerprint covers what makes the child what it is (command, args, cwd, url, protocol, and the
// names of its env variables and headers, never their values), and names its file beside the child's name, so
// that two configs sharing a state dir, each with a child of that name, keep an entry each.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { ChildConfig } from "../config/index.js";
import type { ChildSchema, ListKind } from "./child.js";
import { AtomicFile } from "../shared/atomic-file.js";
import { isObject } from "../shared/json.js";

type CatalogLists = Partial<ChildSchema>;

function childFingerprint(config: ChildConfig): string {
  const defining = {
    transport: config.transport,
    command: config.command ?? null,
    args: config.args,
    cwd: config.cwd ?? null,
    url: config.url ?? null,
    protocol: config.protocol,
    env: Object.keys(config.env).sort(),
    headers: Object.keys(config.headers).sort(),
  };
  return createHash("sha256").update(JSON.stringify(defining)).digest("hex");
}

/** What is kept of one child beside its lists. */
interface CatalogEntry {
  lists: CatalogLists;
  /**
   * The child stayed silent on, or ended at, a server/discover sent before initialize (a 2025 stdio server that
   * takes nothing before initialize): it is initialized first from then on, and the probe costs it nothing again.
   */
  initializeFirst?: true;
}

/**
 * An entry of another definition of a child of the same name that was not written for this long is removed when
 * this one is written: the definition it was for has most likely been edited away.
 */
export const STALE_ENTRY_MS = 30 * 24 * 60 * 60_000;

/**
 * One child's entry: read once, as the child is made (at start-up or on a reload, before it answers a call), then
 * kept in memory and written through on every change without blocking, the newest entry last.
 */
export class CatalogShelf {
  readonly file: string;
  private readonly folder: string;
  private readonly fingerprint: string;
  private entry: CatalogEntry;
  private readonly writer: AtomicFile;
  /** The last save asked for: its write and the clean-up after it. */
  private saving: Promise<void> = Promise.resolve();

  constructor(
    stateDir: string,
    private readonly config: ChildConfig,
  ) {
    this.folder = join(stateDir, "catalog");
    this.fingerprint = childFingerprint(config);
    // Child names are letters, digits, "_" and "-": the dot parts the name from the definition.
    this.file = join(this.folder, `${config.name}.${this.fingerprint.slice(0, 16)}.json`);
    this.writer = new AtomicFile(this.file);
    this.entry = this.load();
  }

  /** What was recorded for this definition; empty when nothing was (or the file is damaged or for another one). */
  read(): CatalogLists {
    return this.stored().lists;
  }

  /** True once any list of this definition was recorded: it has started before. */
  get everListed(): boolean {
    return Object.keys(this.read()).length > 0;
  }

  /** True once the child was found to take nothing before initialize (see CatalogEntry.initializeFirst). */
  get initializeFirst(): boolean {
    return this.stored().initializeFirst === true;
  }

  markInitializeFirst(): void {
    if (!this.initializeFirst) this.save({ ...this.stored(), initializeFirst: true });
  }

  /**
   * Records a list as the child gave it. True when it differs from a list recorded before (which a client may
   * have been shown); false when it is the same, or the first of its kind.
   */
  record(kind: ListKind, items: ChildSchema[ListKind]): boolean {
    const before = this.read()[kind];
    const same = before !== undefined && JSON.stringify(before) === JSON.stringify(items);
    if (same) return false;
    this.save({ ...this.stored(), lists: { ...this.read(), [kind]: items } });
    return before !== undefined;
  }

  /** Resolves once every save asked for so far has been written (or has failed) and cleaned up after. */
  async settled(): Promise<void> {
    await this.writer.settled();
    await this.saving;
  }

  private stored(): CatalogEntry {
    return this.entry;
  }

  private load(): CatalogEntry {
    try {
      // eslint-disable-next-line no-restricted-syntax -- synchronous: read once, as the child is made at start-up or on a reload, before it answers any call.
      const stored: unknown = JSON.parse(readFileSync(this.file, "utf8"));
      if (isObject(stored) && stored.fingerprint === this.fingerprint && isObject(stored.lists)) {
        return { lists: stored.lists as CatalogLists, ...(stored.initializeFirst === true && { initializeFirst: true }) };
      }
    } catch {
      // Missing or damaged: nothing recorded.
    }
    return { lists: {} };
  }

  private save(entry: CatalogEntry): void {
    this.entry = entry;
    const text = JSON.stringify({ fingerprint: this.fingerprint, savedAt: new Date().toISOString(), ...entry });
    // A catalog that cannot be written costs only the next start's speed.
    this.saving = this.writer
      .write(text)
      .then(() => this.removeStaleSiblings())
      .catch(() => {});
  }

  /** Entries of other definitions of this name, not written for STALE_ENTRY_MS (see there). */
  private async removeStaleSiblings(): Promise<void> {
    const before = Date.now() - STALE_ENTRY_MS;
    const own = `${this.config.name}.`;
    for (const name of await readdir(this.folder)) {
      if (!name.startsWith(own) || !name.endsWith(".json") || join(this.folder, name) === this.file) continue;
      const file = join(this.folder, name);
      const written = (await stat(file).catch(() => undefined))?.mtimeMs;
      if (written !== undefined && written < before) await unlink(file);
    }
  }
}
