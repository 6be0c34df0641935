// The audit file: JSON lines appended in order, readable by its owner only (0600), rotated by size; and the ring of
// the latest records the status page shows, kept whether or not a file is written.
import { chmod, mkdir, open, rename, rm, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import type { AuditSettings } from "../../config/observe.js";
import { lazyLogger } from "../../shared/log.js";
import type { AuditRecord } from "./audit-record.js";

const log = lazyLogger({ subsystem: "audit" });

/** Records the page can show. */
export const RECENT_CALLS = 200;
/** Lines waiting for the disk at most; past it (a disk that stopped) records are counted and dropped, not kept. */
const MAX_QUEUED = 10_000;

export class CallRing {
  private readonly records: AuditRecord[] = [];

  add(record: AuditRecord): void {
    this.records.push(record);
    if (this.records.length > RECENT_CALLS) this.records.shift();
  }

  /** Newest first; only `principal`'s when one is given. */
  latest(principal?: string): AuditRecord[] {
    const mine = principal === undefined ? this.records : this.records.filter((record) => record.principal === principal);
    return mine.slice().reverse();
  }
}

export class AuditFile {
  private handle: FileHandle | undefined;
  private size = 0;
  private queue: string[] = [];
  private flushing: Promise<void> | undefined;
  private dropped = 0;
  private failed = false;

  constructor(private readonly settings: AuditSettings & { path: string }) {}

  write(record: AuditRecord): void {
    if (this.queue.length >= MAX_QUEUED) {
      this.dropped++;
      return;
    }
    this.queue.push(`${JSON.stringify(record)}\n`);
    this.flushing ??= this.flush().finally(() => (this.flushing = undefined));
  }

  /** Resolves once every record written so far is on disk (or given up on). */
  async drained(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  async close(): Promise<void> {
    await this.drained();
    await this.handle?.close();
    this.handle = undefined;
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const chunk = this.queue.join("");
      this.queue = [];
      try {
        const bytes = Buffer.byteLength(chunk);
        let handle = this.handle ?? (await this.openFile());
        if (this.size > 0 && this.size + bytes > this.settings.maxBytes) {
          await this.rotate();
          handle = await this.openFile();
        }
        await handle.write(chunk);
        this.size += bytes;
        this.failed = false;
      } catch (error) {
        // Said once per run of failures: a full disk must not fill the log as well.
        if (!this.failed) log.error({ err: error, path: this.settings.path }, "cannot write the audit log; its records are lost until it can");
        this.failed = true;
      }
      if (this.dropped > 0) {
        log.warn({ dropped: this.dropped, path: this.settings.path }, "audit records dropped while the disk did not keep up");
        this.dropped = 0;
      }
    }
  }

  private async openFile(): Promise<FileHandle> {
    await mkdir(dirname(this.settings.path), { recursive: true, mode: 0o700 });
    const handle = await open(this.settings.path, "a", 0o600);
    // A file that was there already keeps its mode when opened: it is made the owner's alone.
    await chmod(this.settings.path, 0o600);
    this.size = (await handle.stat()).size;
    this.handle = handle;
    return handle;
  }

  /** PATH.N-1 becomes PATH.N down to PATH becoming PATH.1; the oldest beyond `keep` is removed. */
  private async rotate(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
    const { path, keep } = this.settings;
    if (keep === 0) await rm(path, { force: true });
    else {
      await rm(`${path}.${keep}`, { force: true });
      for (let at = keep - 1; at >= 1; at--) await rename(`${path}.${at}`, `${path}.${at + 1}`).catch(() => {});
      await rename(path, `${path}.1`);
    }
    this.size = 0;
  }
}
