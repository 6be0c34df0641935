// Where a stdio child's command is found, looked up the way spawn does: a path as it is, a bare name on the PATH
// the child gets. Used to say "not found" before a start fails on it, and which PATH was searched.
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { ChildConfig } from "../config/index.js";
import { childEnv } from "./child-env.js";

export type CommandLookup = { found: string } | { missing: string; searched: string[] };

/** A stdio child's command, on the PATH its environment gives it. */
export function findCommand(config: ChildConfig, parent: NodeJS.ProcessEnv = process.env): CommandLookup {
  return findExecutable(config.command!, config.cwd ?? process.cwd(), childEnv(config.env, config.inheritEnv, parent).PATH);
}

/** A path as it is (relative to `cwd`); a bare name in the folders of `pathVariable`. */
export function findExecutable(command: string, cwd: string, pathVariable: string | undefined): CommandLookup {
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : resolve(cwd, command);
    return runnable(path) ? { found: path } : { missing: command, searched: [] };
  }
  const searched = (pathVariable ?? "").split(delimiter).filter(Boolean);
  for (const dir of searched) {
    const path = join(dir, command);
    if (runnable(path)) return { found: path };
  }
  return { missing: command, searched };
}

function runnable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
