// The audit file: JSON lines appended in order, readable by its owner only (0600), rotated by size; and the ring of
// the latest records the status page shows, kept whether or not a file is written.
import { chmod, mkdir, open, rename, rm, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import type { AuditSettings } from "../../config/observe.js";
import { lazyLogger } from "../../shared/log.js";
import { withTime, type AuditRecord, type CallRecord } from "./audit-record.js";

const log = lazyLogger({ subsystem: "audit" });

/** Records the page can show. */
export const RECENT_CALLS = 200;
/** Lines waiting for the disk at most; past it (a disk that stopped) records are counted and dropped, not kept. */
const MAX_QUEUED = 10_000;
/** How long a record waits for others to share its write: the calls of a busy moment cost one write, not one each. */
export const AUDIT_FLUSH_DELAY_MS = 100;

export class CallRing {
  private readonly records: { at: number; record: CallRecord }[] = [];

  /** `at`: when the call was made, in ms since the epoch. */
  add(at: number, record: CallRecord): void {
    this.records.push({ at, record });
    if (this.records.length > RECENT_CALLS) this.records.shift();
  }

  /** Newest first; only `principal`'s when one is given. */
  latest(principal?: string): AuditRecord[] {
    const latest: AuditRecord[] = [];
    for (let i = this.records.length - 1; i >= 0; i--) {
      const { at, record } = this.records[i]!;
      if (principal === undefined || record.principal === principal) latest.push(withTime(at, record));
    }
    return latest;
  }
}

export class AuditFile {
  private handle: FileHandle | undefined;
  private size = 0;
  private queue: string[] = [];
  private flushing: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private dropped = 0;
  private failed = false;

  constructor(private readonly settings: AuditSettings & { path: string }) {}

  /**
   * Opens the file as gaggle starts, so that a path it cannot write is said at once rather than at the first call.
   * Never throws: gaggle serves without the file, and each later write tries again.
   */
  async open(): Promise<void> {
    try {
      await this.openFile();
    } catch (error) {
      this.cannotWrite(error);
    }
  }

  write(record: AuditRecord): void {
    if (this.queue.length >= MAX_QUEUED) {
      this.dropped++;
      return;
    }
    this.queue.push(`${JSON.stringify(record)}\n`);
    this.schedule();
  }

  /** Resolves once every record written so far is on disk (or given up on): what waits for company is written now. */
  async drained(): Promise<void> {
    if (this.flushTimer) this.startFlush();
    while (this.flushing) await this.flushing;
  }

  /** A flush under way takes what is queued meanwhile; otherwise one starts after AUDIT_FLUSH_DELAY_MS. */
  private schedule(): void {
    if (this.flushing || this.flushTimer) return;
    this.flushTimer = setTimeout(() => this.startFlush(), AUDIT_FLUSH_DELAY_MS);
    // gaggle drains the file as it stops; a pending write never keeps it running.
    this.flushTimer.unref();
  }

  private startFlush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.flushing ??= this.flush().finally(() => {
      this.flushing = undefined;
      // Queued after the flush's last look, before it ended.
      if (this.queue.length > 0) this.schedule();
    });
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
        this.cannotWrite(error);
      }
      if (this.dropped > 0) {
        log.warn({ dropped: this.dropped, path: this.settings.path }, "audit records dropped while the disk did not keep up");
        this.dropped = 0;
      }
    }
  }

  /** Said once per run of failures: a full disk must not fill the log as well. */
  private cannotWrite(error: unknown): void {
    if (!this.failed) {
      const { path } = this.settings;
      const reason = error instanceof Error ? error.message : String(error);
      log.error(
        { path, reason },
        `cannot write the audit log ${path} (${reason}); its records are lost until it can: give [audit] path a file in a folder gaggle may create and write`,
      );
    }
    this.failed = true;
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
