// Where a stdio child's command is found, looked up the way spawn does: a path as it is, a bare name on the PATH
// the child gets. Used to say "not found" before a start fails on it, and which PATH was searched.
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { ChildConfig } from "../config/index.js";
import { childEnv } from "./child-env.js";

export type CommandLookup = { found: string } | { missing: string; searched: string[] };

export function findCommand(config: ChildConfig, parent: NodeJS.ProcessEnv = process.env): CommandLookup {
  const command = config.command!;
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : resolve(config.cwd ?? process.cwd(), command);
    return runnable(path) ? { found: path } : { missing: command, searched: [] };
  }
  const searched = (childEnv(config.env, config.inheritEnv, parent).PATH ?? "").split(delimiter).filter(Boolean);
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
