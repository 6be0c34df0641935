// Where a stdio child's command is found, on the PATH the child gets: used to say "not found" before a start
// fails on it, and which PATH was searched.
import type { ChildConfig } from "../../config/index.js";
import { findExecutable, type CommandLookup } from "../../shared/fs-checks.js";
import { childEnv } from "./child-env.js";

export type { CommandLookup };

/** A stdio child's command, on the PATH its environment gives it. */
export function findCommand(config: ChildConfig, parent: NodeJS.ProcessEnv = process.env): CommandLookup {
  return findExecutable(config.command!, config.cwd ?? process.cwd(), childEnv(config.env, config.inheritEnv, parent).PATH);
}
