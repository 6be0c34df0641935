// Owns finding the Goose executable before a gosling starts, and the error that says how to get one.
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { GaggleError } from "../../errors.js";

const INSTALL_URL = "https://block.github.io/goose/docs/getting-started/installation";

/** The executable `command` names: itself when it holds a "/", else the first match on PATH. */
export function findCommand(command: string, cwd: string, env: Record<string, string | undefined>): string | undefined {
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : join(cwd, command);
    return isExecutable(path) ? path : undefined;
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, command);
    if (isExecutable(path)) return path;
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function gooseMissing(command: string, reason: string): GaggleError {
  return new GaggleError("SERVER_FAILED", `cannot start Goose: "${command}" ${reason}`, {
    hint: `install the Goose CLI (${INSTALL_URL}), or set [virtual.goose] command to the path of your goose executable`,
  });
}
