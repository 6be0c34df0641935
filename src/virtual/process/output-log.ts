// One process's output log: both streams appended to one file as they arrive, capped, with byte and line counts kept.
import { open, type FileHandle } from "node:fs/promises";

const NEWLINE = 0x0a;

/** Accepted output not yet on disk past which write() asks the caller to pause its sources. */
const QUEUE_LIMIT = 1024 * 1024;

interface Pending {
  chunk: Buffer;
  newlines: number;
}

/**
 * Chunks are written in the order they arrive, one write at a time, by one queue per log. `bytes` and `lines`
 * count what has reached the disk, so a view reads exactly that many bytes of the file whatever is still queued.
 * The cap is applied as chunks arrive: past `capBytes` every byte is counted in `droppedBytes` and dropped.
 */
export class OutputLog {
  bytes = 0;
  droppedBytes = 0;
  /** Set when the disk refused a write (ENOSPC, EIO); that write, what was queued after it and later output are dropped. */
  writeError: string | undefined;
  private newlines = 0;
  private endsWithNewline = true;
  /** Bytes taken in for the file (on disk or queued): what the cap is applied to. */
  private accepted = 0;
  private queue: Pending[] = [];
  private queuedBytes = 0;
  private writing: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  /** The file opened, the first thing every write waits for. */
  private readonly file: Promise<FileHandle>;
  /** The file could not be opened or written: nothing more is taken in. */
  private broken = false;

  /** Creates (or empties) the file, readable by its owner alone; opened() says whether that worked. */
  constructor(
    readonly path: string,
    readonly capBytes: number,
  ) {
    this.file = open(path, "w", 0o600);
    // Its failure is reported by opened() and by the first write, never as an unhandled rejection.
    this.file.catch(() => {});
  }

  /** Resolves once the file is open; rejects with the error that kept it from opening. */
  async opened(): Promise<void> {
    await this.file;
  }

  /** Lines on disk; a last line without its newline counts. */
  get lines(): number {
    return this.newlines + (this.endsWithNewline ? 0 : 1);
  }

  get truncated(): boolean {
    return this.droppedBytes > 0;
  }

  /**
   * Queues `chunk` (what fits under the cap) behind the chunks before it. False when the queue holds more than it
   * should: the caller pauses its sources until drained() resolves.
   */
  write(chunk: Buffer): boolean {
    const room = this.broken || this.closing ? 0 : Math.max(this.capBytes - this.accepted, 0);
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.droppedBytes += chunk.length - kept.length;
    if (kept.length === 0) return true;
    this.accepted += kept.length;
    this.queue.push({ chunk: kept, newlines: countNewlines(kept) });
    this.queuedBytes += kept.length;
    this.writing ??= this.writeQueued();
    return this.queuedBytes <= QUEUE_LIMIT;
  }

  /** Resolves once every chunk queued so far is on disk (or dropped on a write error). */
  async drained(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Writes what is queued, then closes the file; later output is dropped. */
  close(): Promise<void> {
    this.closing ??= this.drained().then(async () => {
      // After a failed write the file is closed already; a file that never opened has nothing to close.
      if (!this.broken) await (await this.file.catch(() => undefined))?.close();
    });
    return this.closing;
  }

  private async writeQueued(): Promise<void> {
    let handle: FileHandle | undefined;
    for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
      const { chunk, newlines } = next;
      try {
        handle ??= await this.file;
        let written = 0;
        while (written < chunk.length) written += (await handle.write(chunk, written, chunk.length - written)).bytesWritten;
      } catch (error) {
        this.writeError = (error as NodeJS.ErrnoException).code ?? String(error);
        // The chunk that failed is still counted in queuedBytes, with everything queued behind it.
        this.droppedBytes += this.queuedBytes;
        this.queue = [];
        this.queuedBytes = 0;
        this.broken = true;
        await handle?.close().catch(() => {});
        break;
      }
      this.queuedBytes -= chunk.length;
      this.bytes += chunk.length;
      this.newlines += newlines;
      this.endsWithNewline = chunk[chunk.length - 1] === NEWLINE;
    }
    this.writing = undefined;
  }
}

function countNewlines(chunk: Buffer): number {
  let count = 0;
  for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) count++;
  return count;
}
