// [virtual.workspace] backups: a file's old content copied to FILE.bak beside it before Edit or Replace changes it,
// never written through a symlink or into another file's hard link.
import { constants, copyFileSync, lstatSync, unlinkSync, type Stats } from "node:fs";
import { GaggleError } from "../../shared/errors.js";
import { fsFailure } from "./fs-errors.js";

/**
 * Copies `path` (a file that exists, its real path under the roots) to `path`.bak, with its mode, replacing an older
 * .bak; answers the line the tool's answer ends with. FILE.bak lies beside a confined file, so it is confined too
 * unless it is a symlink: one is left alone, and so is a folder, the answer saying no backup was written. A copy
 * that fails refuses the change, which was asked for with a backup.
 */
export function backUp(path: string): string {
  const bak = `${path}.bak`;
  let old: Stats | undefined;
  try {
    old = lstatSync(bak);
  } catch {
    old = undefined; // none yet (or unreadable: the copy below says why)
  }
  if (old?.isSymbolicLink()) return `[no backup: ${bak} is a symlink, which is left alone]`;
  if (old && !old.isFile()) return `[no backup: ${bak} is not a regular file, which is left alone]`;
  try {
    // Removed and made anew, not written into: an old .bak may be a hard link to another file. COPYFILE_EXCL creates
    // it exclusively, so a symlink put there meanwhile is refused, not followed; the copy takes the file's mode.
    if (old) unlinkSync(bak);
    copyFileSync(path, bak, constants.COPYFILE_EXCL);
  } catch (error) {
    const failure = fsFailure(error, bak);
    throw new GaggleError(failure.code, `${path} was left unchanged: its backup could not be written (${failure.message})`, {
      hint: "fix the folder's permissions, or turn [virtual.workspace] backups off",
      cause: error,
    });
  }
  return `[backup: ${bak}]`;
}
