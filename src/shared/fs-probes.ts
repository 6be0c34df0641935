// The questions of fs-checks.ts asked without blocking the event loop, for code that answers a client's call or an event.
import { realpath, stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";

export async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

export async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/** The path with symlinks resolved, so it compares equal to the file or folder it really is; absolute either way. */
export async function canonical(path: string): Promise<string> {
  return realpath(path).catch(() => (isAbsolute(path) ? path : resolve(path)));
}
