// Owns finding the Goose executable before a gosling starts, and the error that says how to get one.
import { delimiter, join } from "node:path";
import { isExecutableFile } from "../../shared/fs-checks.js";
import { GaggleError } from "../../shared/errors.js";

const INSTALL_URL = "https://block.github.io/goose/docs/getting-started/installation";

/**
 * The executable `command` names: itself when it holds a "/" (the config layer made such a command absolute),
 * else the first match on PATH.
 */
export function findCommand(command: string, env: Record<string, string | undefined>): string | undefined {
  if (command.includes("/")) return isExecutableFile(command) ? command : undefined;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, command);
    if (isExecutableFile(path)) return path;
  }
  return undefined;
}

export function gooseMissing(command: string, reason: string): GaggleError {
  return new GaggleError("SERVER_FAILED", `cannot start Goose: "${command}" ${reason}`, {
    hint: `install the Goose CLI (${INSTALL_URL}), or set [virtual.goose] command to the path of your goose executable`,
  });
}
