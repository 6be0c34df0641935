// A file replaced whole or not at all: written beside its place under a name of its own, then renamed over it,
// so that neither a crash nor another process writing the same file at once leaves half of it.
import { randomBytes } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** `mode` applies to the file, `dirMode` to folders made for it. */
export function writeFileAtomic(path: string, text: string, options: { mode?: number; dirMode?: number } = {}): void {
  mkdirSync(dirname(path), { recursive: true, ...(options.dirMode !== undefined && { mode: options.dirMode }) });
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(temporary, text, options.mode !== undefined ? { mode: options.mode } : {});
  renameSync(temporary, path);
}
