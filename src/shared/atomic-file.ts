// A file replaced whole or not at all: written beside its place under a name of its own, then renamed over it,
// so that neither a crash nor another process writing the same file at once leaves half of it.
import { randomBytes } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

export interface AtomicFileOptions {
  /** Applies to the file. */
  mode?: number;
  /** Applies to folders made for it. */
  dirMode?: number;
}

/** Blocks the event loop: for start-up and CLI commands, where nothing else waits; everything else uses writeFileAtomicAsync. */
export function writeFileAtomic(path: string, text: string, options: AtomicFileOptions = {}): void {
  /* eslint-disable no-restricted-syntax -- synchronous: see above. */
  mkdirSync(dirname(path), { recursive: true, ...(options.dirMode !== undefined && { mode: options.dirMode }) });
  const temporary = temporaryBeside(path);
  writeFileSync(temporary, text, options.mode !== undefined ? { mode: options.mode } : {});
  renameSync(temporary, path);
  /* eslint-enable no-restricted-syntax */
}

/** writeFileAtomic without blocking; a temporary file left by a failed write is removed. */
export async function writeFileAtomicAsync(path: string, text: string, options: AtomicFileOptions = {}): Promise<void> {
  await mkdir(dirname(path), { recursive: true, ...(options.dirMode !== undefined && { mode: options.dirMode }) });
  const temporary = temporaryBeside(path);
  try {
    await writeFile(temporary, text, options.mode !== undefined ? { mode: options.mode } : {});
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}

function temporaryBeside(path: string): string {
  return `${path}.${randomBytes(6).toString("hex")}.tmp`;
}

/**
 * One file kept as the latest text it was given. Writes run one at a time, so an older text never lands after a
 * newer one; texts given while a write runs wait for it, and only the newest of them is written next, which all
 * their callers wait for. Memory stays at one text in flight and one waiting.
 */
export class AtomicFile {
  private writing: Promise<void> | undefined;
  private next: { text: string; done: Promise<void> } | undefined;
  /** Why the last write to end failed; undefined once one succeeds. */
  private failure: unknown;

  constructor(
    readonly path: string,
    private readonly options: AtomicFileOptions = {},
  ) {}

  /** Resolves once `text` or a newer one is the file's content; rejects with the error of that write. */
  write(text: string): Promise<void> {
    // A waiting text is replaced even once the write before it has ended, until it has started: it is the newer one.
    if (this.next) {
      this.next.text = text;
      return this.next.done;
    }
    if (this.writing === undefined) return this.start(text);
    const next: { text: string; done: Promise<void> } = { text, done: Promise.resolve() };
    next.done = this.writing
      .catch(() => {})
      .then(() => {
        this.next = undefined;
        return this.start(next.text);
      });
    this.next = next;
    return next.done;
  }

  /** Resolves once every write asked for so far has ended, whether or not it succeeded. */
  async settled(): Promise<void> {
    for (let last = this.next?.done ?? this.writing; last; last = this.next?.done ?? this.writing) await last.catch(() => {});
  }

  /** Resolves once the newest text given is the file's content; rejects with the error of its write if it failed. */
  async saved(): Promise<void> {
    await this.settled();
    if (this.failure !== undefined) throw this.failure;
  }

  private start(text: string): Promise<void> {
    const writing = writeFileAtomicAsync(this.path, text, this.options)
      .then(
        () => (this.failure = undefined),
        (error: unknown) => {
          this.failure = error;
          throw error;
        },
      )
      .finally(() => {
        if (this.writing === writing) this.writing = undefined;
      });
    this.writing = writing;
    return writing;
  }
}
