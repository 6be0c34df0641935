// The files and folders the workspace's tools open, by descriptor: what was opened is checked against the roots
// (where the descriptor really is, not the name again, which a symlink swapped in meanwhile would move), only
// regular files are read (a FIFO would block), and no file is written through a hard link.
import { closeSync, constants, fstatSync, ftruncateSync, mkdirSync, openSync, readlinkSync, statSync, writeSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { GaggleError } from "../../shared/errors.js";
import { fsFailure } from "./fs-errors.js";
import type { Place } from "./place.js";

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

/** A file or folder open by descriptor, its stat taken from the descriptor. */
export interface Opened {
  fd: number;
  stat: Stats;
  /** The path the tool was given, resolved: what answers name. */
  path: string;
}

/**
 * A path that reaches the open file or folder through its descriptor on Linux (`/proc/self/fd/N`), whatever is
 * renamed or swapped meanwhile; elsewhere its path, which a swap can move.
 */
export function throughDescriptor(opened: Opened): string {
  return DESCRIPTORS ? `/proc/self/fd/${opened.fd}` : opened.path;
}

/** Where a descriptor really is: Linux says it in /proc; undefined elsewhere. */
export function descriptorPath(fd: number): string | undefined {
  if (!DESCRIPTORS) return undefined;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

const DESCRIPTORS = (() => {
  try {
    readlinkSync("/proc/self/fd/0");
    return true;
  } catch {
    return false;
  }
})();

export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
}

/**
 * Opens the regular file `path` (its real path under the roots) for reading, without following a symlink put
 * there since it was resolved and without waiting on a FIFO; refused when it is a folder, not a regular file, or
 * (once open) not under the roots.
 */
export function openToRead(place: Place, path: string): Opened {
  const opened = openChecked(place, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (opened.stat.isDirectory()) fail(opened, new GaggleError("INVALID_ARGS", `${path} is a folder, not a file`, { hint: "list it with LS" }));
  if (!opened.stat.isFile()) fail(opened, notRegular(path, opened.stat));
  return opened;
}

/** Opens the folder `path` (its real path under the roots) to list it; refused when it is a file or (once open) not under the roots. */
export function openFolder(place: Place, path: string): Opened {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_NONBLOCK);
  } catch (error) {
    throw fsFailure(error, path);
  }
  const opened = { fd, stat: fstatSync(fd), path };
  if (!opened.stat.isDirectory()) fail(opened, new GaggleError("INVALID_ARGS", `${path} is a file, not a folder`, { hint: "read it with View" }));
  checkInside(place, opened);
  return opened;
}

/** A file open to be written, and its folder, open too: a backup beside it is made through the folder's descriptor. */
export interface Writable extends Opened {
  folder: Opened;
  /** It did not exist: it was made now. */
  created: boolean;
}

/**
 * Opens the file `path` (its real path under the roots) to be rewritten in place, or creates it (`create`:
 * "never", "only" or "either"; with `parents`, its missing folders too). Folders are made and the file created
 * through their parent's descriptor, each checked to be under the roots before anything is made in it. Refused:
 * a file with more than one hard link (another may lie outside the roots, and a write in place reaches it), one
 * that is not a regular file, and one that became a symlink.
 */
export function openToWrite(place: Place, path: string, how: { create: "never" | "only" | "either"; parents?: boolean }): Writable {
  const folder = openParent(place, dirname(path), how.parents ?? false);
  const name = join(throughDescriptor(folder), basename(path));
  try {
    let fd: number | undefined;
    let created = false;
    if (how.create !== "only") {
      try {
        fd = openSync(name, O_RDWR | O_NOFOLLOW | O_NONBLOCK);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT" || how.create === "never") throw error;
      }
    }
    if (fd === undefined) {
      fd = openSync(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
      created = true;
    }
    const opened = { fd, stat: fstatSync(fd), path };
    if (!opened.stat.isFile()) fail(opened, notRegular(path, opened.stat));
    if (opened.stat.nlink > 1) {
      fail(
        opened,
        new GaggleError("PERMISSION_DENIED", `${path} has ${opened.stat.nlink} hard links, and Edit and Replace do not write through hard links`, {
          hint: "another link may lie outside the roots, and a write in place would change it too; copy the file to a new name, or change it with Bash",
        }),
      );
    }
    checkInside(place, opened);
    return { ...opened, folder, created };
  } catch (error) {
    closeQuietly(folder.fd);
    if ((error as NodeJS.ErrnoException).code === "ELOOP") {
      throw new GaggleError("PERMISSION_DENIED", `${path} became a symlink after it was checked, and is not followed`, {
        hint: "check the path and retry",
      });
    }
    throw fsFailure(error, path);
  }
}

/** Replaces the whole content of a file open to be written with `content`. */
export function rewrite(file: Writable, content: string): void {
  const data = Buffer.from(content);
  ftruncateSync(file.fd, 0);
  for (let written = 0; written < data.length;) written += writeSync(file.fd, data, written, data.length - written, written);
}

/** The folder `dir`, opened (and with `parents`, made component by component through its parent's descriptor). */
function openParent(place: Place, dir: string, parents: boolean): Opened {
  const missing: string[] = [];
  let at = dir;
  for (;;) {
    try {
      statSync(at);
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== "ENOENT" && code !== "ENOTDIR") || !parents || dirname(at) === at) throw fsFailure(error, dir);
      missing.unshift(basename(at));
      at = dirname(at);
    }
  }
  let folder = openFolder(place, at);
  for (const name of missing) {
    const next = join(throughDescriptor(folder), name);
    try {
      mkdirSync(next);
      const fd = openSync(next, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      closeQuietly(folder.fd);
      folder = { fd, stat: fstatSync(fd), path: join(folder.path, name) };
    } catch (error) {
      closeQuietly(folder.fd);
      throw fsFailure(error, join(folder.path, name));
    }
    checkInside(place, folder);
  }
  return folder;
}

/** Opens `path` with `flags`, then refuses it unless the descriptor lies under the roots. */
function openChecked(place: Place, path: string, flags: number): Opened {
  let fd: number;
  try {
    fd = openSync(path, flags);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") {
      throw new GaggleError("PERMISSION_DENIED", `${path} became a symlink after it was checked, and is not followed`, {
        hint: "check the path and retry",
      });
    }
    throw fsFailure(error, path);
  }
  const opened = { fd, stat: fstatSync(fd), path };
  checkInside(place, opened);
  return opened;
}

/**
 * The descriptor's real place is under the roots. Where the system cannot say (no /proc), the path is confined again
 * and must still name the same file: a narrower check, since a swap can come and go between the two.
 */
function checkInside(place: Place, opened: Opened): void {
  const real = descriptorPath(opened.fd);
  if (real !== undefined ? place.inside(real) : sameFile(place, opened)) return;
  fail(
    opened,
    new GaggleError(
      "PERMISSION_DENIED",
      `${opened.path} was moved outside the allowed roots (${place.roots}) as it was opened${real ? `: it is ${real}` : ""}`,
      {
        hint: "a folder on its path was swapped for a symlink; give a path under the roots",
      },
    ),
  );
}

function sameFile(place: Place, opened: Opened): boolean {
  try {
    const again = statSync(place.confine(opened.path));
    return again.ino === opened.stat.ino && again.dev === opened.stat.dev;
  } catch {
    return false;
  }
}

function notRegular(path: string, stat: Stats): GaggleError {
  const kind = stat.isFIFO()
    ? "a FIFO"
    : stat.isSocket()
      ? "a socket"
      : stat.isCharacterDevice() || stat.isBlockDevice()
        ? "a device"
        : "not a regular file";
  return new GaggleError("INVALID_ARGS", `${path} is ${kind}: the file tools read and write only regular files`, {
    hint: "read it with Bash if you mean to (it may block until something writes to it)",
  });
}

function fail(opened: Opened, error: GaggleError): never {
  closeQuietly(opened.fd);
  throw error;
}
