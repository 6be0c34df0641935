// The files and folders the workspace's tools open, by descriptor: what was opened is checked against the roots
// (where the descriptor really is, not the name again, which a symlink swapped in meanwhile would move), only
// regular files are read (a FIFO would block), and no file is written through a hard link. Every call is
// asynchronous, a FileHandle held for each descriptor: a file on a hung mount stalls its own call, and the others
// only once as many calls hang as Node has file system threads (see the workspace page).
import { constants, readlinkSync, type Stats } from "node:fs";
import { mkdir, open, stat, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { GaggleError } from "../../shared/errors.js";
import { fsFailure } from "./fs-errors.js";
import type { Place } from "./place.js";

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

/** A file or folder open by descriptor, its stat taken from the descriptor; closed with closeQuietly. */
export interface Opened {
  handle: FileHandle;
  /** The handle's descriptor, as /proc/self/fd names it. */
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

/**
 * Where a descriptor really is: Linux says it in /proc; undefined elsewhere. Synchronous: the kernel answers from the
 * open descriptor's own entry, without asking the file system it lies on, so no mount can hang it, and a walk asks
 * once per folder.
 */
export function descriptorPath(fd: number): string | undefined {
  if (!DESCRIPTORS) return undefined;
  try {
    // eslint-disable-next-line no-restricted-syntax -- synchronous: see above.
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

const DESCRIPTORS = (() => {
  try {
    // eslint-disable-next-line no-restricted-syntax -- synchronous: read once as the module loads, before any call; /proc is no mount that hangs.
    readlinkSync("/proc/self/fd/0");
    return true;
  } catch {
    return false;
  }
})();

/** Closes the file or folder; one already closed is left so. */
export async function closeQuietly(opened: Opened): Promise<void> {
  try {
    await opened.handle.close();
  } catch {
    // Already closed.
  }
}

/** Opens `path` with `flags` (and `mode` when it creates it), as an Opened whose stat comes from the descriptor. */
async function openAs(path: string, flags: number, shown: string, mode?: number): Promise<Opened> {
  const handle = await open(path, flags, mode);
  try {
    return { handle, fd: handle.fd, stat: await handle.stat(), path: shown };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/**
 * Opens the regular file `path` (its real path under the roots) for reading, without following a symlink put
 * there since it was resolved and without waiting on a FIFO; refused when it is a folder, not a regular file, or
 * (once open) not under the roots.
 */
export async function openToRead(place: Place, path: string): Promise<Opened> {
  const opened = await openChecked(place, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (opened.stat.isDirectory()) await fail(opened, new GaggleError("INVALID_ARGS", `${path} is a folder, not a file`, { hint: "list it with LS" }));
  if (!opened.stat.isFile()) await fail(opened, notRegular(path, opened.stat));
  return opened;
}

/** Opens the folder `path` (its real path under the roots) to list it; refused when it is a file or (once open) not under the roots. */
export async function openFolder(place: Place, path: string): Promise<Opened> {
  let opened: Opened;
  try {
    opened = await openAs(path, O_RDONLY | O_NONBLOCK, path);
  } catch (error) {
    throw fsFailure(error, path);
  }
  if (!opened.stat.isDirectory())
    await fail(opened, new GaggleError("INVALID_ARGS", `${path} is a file, not a folder`, { hint: "read it with View" }));
  await checkInside(place, opened);
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
export async function openToWrite(place: Place, path: string, how: { create: "never" | "only" | "either"; parents?: boolean }): Promise<Writable> {
  const folder = await openParent(place, dirname(path), how.parents ?? false);
  const name = join(throughDescriptor(folder), basename(path));
  try {
    let opened: Opened | undefined;
    let created = false;
    if (how.create !== "only") {
      try {
        opened = await openAs(name, O_RDWR | O_NOFOLLOW | O_NONBLOCK, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT" || how.create === "never") throw error;
      }
    }
    if (opened === undefined) {
      opened = await openAs(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, path, 0o666);
      created = true;
    }
    if (!opened.stat.isFile()) await fail(opened, notRegular(path, opened.stat));
    if (opened.stat.nlink > 1) {
      await fail(
        opened,
        new GaggleError("PERMISSION_DENIED", `${path} has ${opened.stat.nlink} hard links, and Edit and Replace do not write through hard links`, {
          hint: "another link may lie outside the roots, and a write in place would change it too; copy the file to a new name, or change it with Bash",
        }),
      );
    }
    await checkInside(place, opened);
    return { ...opened, folder, created };
  } catch (error) {
    await closeQuietly(folder);
    if ((error as NodeJS.ErrnoException).code === "ELOOP") {
      throw new GaggleError("PERMISSION_DENIED", `${path} became a symlink after it was checked, and is not followed`, {
        hint: "check the path and retry",
      });
    }
    throw fsFailure(error, path);
  }
}

/** Replaces the whole content of a file open to be written with `content`. */
export async function rewrite(file: Writable, content: string): Promise<void> {
  const data = Buffer.from(content);
  await file.handle.truncate(0);
  for (let written = 0; written < data.length;) {
    written += (await file.handle.write(data, written, data.length - written, written)).bytesWritten;
  }
}

/** Closes a file open to be written, and its folder. */
export async function closeWritable(file: Writable): Promise<void> {
  await Promise.all([closeQuietly(file), closeQuietly(file.folder)]);
}

/** The folder `dir`, opened (and with `parents`, made component by component through its parent's descriptor). */
async function openParent(place: Place, dir: string, parents: boolean): Promise<Opened> {
  const missing: string[] = [];
  let at = dir;
  for (;;) {
    try {
      await stat(at);
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== "ENOENT" && code !== "ENOTDIR") || !parents || dirname(at) === at) throw fsFailure(error, dir);
      missing.unshift(basename(at));
      at = dirname(at);
    }
  }
  let folder = await openFolder(place, at);
  for (const name of missing) {
    const next = join(throughDescriptor(folder), name);
    try {
      await mkdir(next);
      const made = await openAs(next, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, join(folder.path, name));
      await closeQuietly(folder);
      folder = made;
    } catch (error) {
      await closeQuietly(folder);
      throw fsFailure(error, join(folder.path, name));
    }
    await checkInside(place, folder);
  }
  return folder;
}

/** Opens `path` with `flags`, then refuses it unless the descriptor lies under the roots. */
async function openChecked(place: Place, path: string, flags: number): Promise<Opened> {
  let opened: Opened;
  try {
    opened = await openAs(path, flags, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") {
      throw new GaggleError("PERMISSION_DENIED", `${path} became a symlink after it was checked, and is not followed`, {
        hint: "check the path and retry",
      });
    }
    throw fsFailure(error, path);
  }
  await checkInside(place, opened);
  return opened;
}

/**
 * The descriptor's real place is under the roots. Where the system cannot say (no /proc), the path is confined again
 * and must still name the same file: a narrower check, since a swap can come and go between the two.
 */
async function checkInside(place: Place, opened: Opened): Promise<void> {
  const real = descriptorPath(opened.fd);
  if (real !== undefined ? place.inside(real) : await sameFile(place, opened)) return;
  await fail(
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

async function sameFile(place: Place, opened: Opened): Promise<boolean> {
  try {
    const again = await stat(await place.confine(opened.path));
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

async function fail(opened: Opened, error: GaggleError): Promise<never> {
  await closeQuietly(opened);
  throw error;
}
