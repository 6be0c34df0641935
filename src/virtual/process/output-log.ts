// One process's output log: both streams appended to one file as they arrive, capped, with byte and line counts kept.
import { closeSync, openSync, writeSync } from "node:fs";

const NEWLINE = 0x0a;

/**
 * Writes are synchronous, chunk by chunk as the pipes deliver them: nothing queues in memory however fast
 * the process prints, and the counts always describe exactly what is on disk, so a view can use them
 * without reading the file. Past `capBytes` every byte is counted and dropped.
 */
export class OutputLog {
  bytes = 0;
  droppedBytes = 0;
  /** Set when the disk refused a write (ENOSPC, EIO); later output is dropped. */
  writeError: string | undefined;
  private newlines = 0;
  private endsWithNewline = true;
  private fd: number | undefined;

  constructor(
    readonly path: string,
    private readonly capBytes: number,
  ) {
    this.fd = openSync(path, "w", 0o600);
  }

  /** Lines on disk; a last line without its newline counts. */
  get lines(): number {
    return this.newlines + (this.endsWithNewline ? 0 : 1);
  }

  get truncated(): boolean {
    return this.droppedBytes > 0;
  }

  write(chunk: Buffer): void {
    const room = this.fd === undefined ? 0 : Math.max(this.capBytes - this.bytes, 0);
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.droppedBytes += chunk.length - kept.length;
    if (kept.length === 0) return;
    try {
      let written = 0;
      while (written < kept.length) written += writeSync(this.fd!, kept, written, kept.length - written);
    } catch (error) {
      this.writeError = (error as NodeJS.ErrnoException).code ?? String(error);
      this.droppedBytes += kept.length;
      this.close();
      return;
    }
    this.bytes += kept.length;
    for (let at = kept.indexOf(NEWLINE); at !== -1; at = kept.indexOf(NEWLINE, at + 1)) this.newlines++;
    this.endsWithNewline = kept[kept.length - 1] === NEWLINE;
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    closeSync(fd);
  }
}
