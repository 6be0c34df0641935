// Where virtual children keep logs and state: gateway.state_dir, else $XDG_STATE_HOME/gaggle.
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { GaggleConfig } from "../config/index.js";

/** A relative gateway.state_dir is taken from the config file's folder, like every other path in the config. */
export function stateDir(config: GaggleConfig, env: NodeJS.ProcessEnv = process.env): string {
  const configured = config.gateway.stateDir;
  if (configured) return resolve(dirname(config.path), configured);
  const xdg = env.XDG_STATE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(env.HOME ?? homedir(), ".local", "state"), "gaggle");
}
