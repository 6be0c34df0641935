// [virtual.workspace] backups: a file's old content copied to FILE.bak beside it before Edit or Replace changes it,
// through the folder's descriptor, never written through a symlink or into another file's hard link.
import { constants, type Stats } from "node:fs";
import { lstat, open, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { GaggleError } from "../../shared/errors.js";
import { fsFailure } from "./fs-errors.js";
import { throughDescriptor, type Writable } from "./opened.js";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/**
 * Copies the open file (under the roots) to FILE.bak in its folder, with its mode, replacing an older .bak; answers
 * the line the tool's answer ends with. A FILE.bak that is a symlink or a folder is left alone, the answer saying no
 * backup was written. A copy that fails refuses the change, which was asked for with a backup.
 */
export async function backUp(file: Writable): Promise<string> {
  const bak = `${file.path}.bak`;
  const name = `${file.path.slice(file.path.lastIndexOf("/") + 1)}.bak`;
  const at = join(throughDescriptor(file.folder), name);
  let old: Stats | undefined;
  try {
    old = await lstat(at);
  } catch {
    old = undefined; // none yet (or unreadable: the copy below says why)
  }
  if (old?.isSymbolicLink()) return `[no backup: ${bak} is a symlink, which is left alone]`;
  if (old && !old.isFile()) return `[no backup: ${bak} is not a regular file, which is left alone]`;
  let target: FileHandle | undefined;
  try {
    // Removed and made anew, not written into: an old .bak may be a hard link to another file. O_EXCL with
    // O_NOFOLLOW creates it exclusively, so a symlink put there meanwhile is refused, not followed.
    if (old) await unlink(at);
    target = await open(at, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    await copy(file.handle, target);
    await target.chmod(file.stat.mode & 0o7777);
  } catch (error) {
    const failure = fsFailure(error, bak);
    throw new GaggleError(failure.code, `${file.path} was left unchanged: its backup could not be written (${failure.message})`, {
      hint: "fix the folder's permissions, or turn [virtual.workspace] backups off",
      cause: error,
    });
  } finally {
    await target?.close();
  }
  return `[backup: ${bak}]`;
}

async function copy(from: FileHandle, to: FileHandle): Promise<void> {
  const buffer = Buffer.alloc(64 * 1024);
  for (let position = 0; ;) {
    const { bytesRead } = await from.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return;
    for (let written = 0; written < bytesRead;) written += (await to.write(buffer, written, bytesRead - written)).bytesWritten;
    position += bytesRead;
  }
}
