// Where gaggle keeps logs and state (virtual children, sign-ins): gateway.state_dir, else $XDG_STATE_HOME/gaggle.
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { GaggleConfig } from "./schema.js";

/** gateway.state_dir comes absolute from the config layer. */
export function stateDir(config: GaggleConfig, env: NodeJS.ProcessEnv = process.env): string {
  return config.gateway.stateDir || defaultStateDir(env);
}

/** $XDG_STATE_HOME/gaggle, else ~/.local/state/gaggle: the state dir of a config that names none. */
export function defaultStateDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(env.HOME ?? homedir(), ".local", "state"), "gaggle");
}

/**
 * Creates the state dir (and folders above it that do not exist) readable by its owner alone: it holds other
 * principals' process logs, team records and sign-ins. One that exists is left as its owner made it; one that
 * cannot be made is reported by the child that first needs it.
 */
export function makeStateDir(dir: string): void {
  try {
    // eslint-disable-next-line no-restricted-syntax -- synchronous: made once, as the gateway is built at start-up, before it answers any call.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    // The child that writes there says what went wrong, where and what to do.
  }
}
