// Which daemon a config belongs to, and where daemons live: computed from the config file's text and the
// environment alone, so that the executable's relay finds a running daemon without loading the program.
import { createHash } from "node:crypto";
import { realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { defaultStateDir } from "../config/state-dir.js";

/** The start of every `${NAME}` and `${NAME:-default}` in a config's text (see config/expand.ts). */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * The key names the program (the executable's path and build), the file (its path and text) and everything its
 * expansion reads from the environment (each variable it names, and HOME for `~`): another build, another file or
 * another value reaching a `${VAR}` gives another key, so a daemon is only ever shared by clients it serves as they
 * would serve themselves.
 */
export function daemonKeyOf(configPath: string, text: string, env: NodeJS.ProcessEnv, program = process.argv[1]): string {
  const names = [...new Set([...text.matchAll(REFERENCE)].map((match) => match[1]!))].sort();
  const hash = createHash("sha256");
  for (const part of [programIdentity(program), configPath, text, `HOME=${env.HOME ?? ""}`, ...names.map((name) => `${name}=${env[name] ?? ""}`)]) {
    hash.update(part).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/** Where every daemon of this user keeps its socket, record, lock and log: `daemon` in the default state dir. */
export function daemonDir(env: NodeJS.ProcessEnv): string {
  return join(defaultStateDir(env), "daemon");
}

function programIdentity(program: string | undefined): string {
  if (program === undefined) return "";
  try {
    const real = realpathSync(program);
    return `${real}@${statSync(real).mtimeMs}`;
  } catch {
    return program;
  }
}
