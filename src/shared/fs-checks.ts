// What gaggle asks of a path before it uses one; each answer is false (or the path as given) when it cannot be read.
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A regular file this process may run. */
export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The path with symlinks resolved, so it compares equal to the file or folder it really is; absolute either way. */
export function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return isAbsolute(path) ? path : resolve(path);
  }
}
