// Whether a session of an agent may start: room for it (its owner's share, the agent's max_active), its command found,
// its folders (cwd, then roots) there. A start asks without blocking; `gaggle doctor` and the start-up checks ask
// with missingFolder, which blocks.
import type { AgentConfig } from "../../config/agents.js";
import { GaggleError } from "../../shared/errors.js";
import { refusal, refusalHint, type SharedLimit } from "../../shared/fair-share.js";
import { isDirectory as isDirectoryNow } from "../../shared/fs-checks.js";
import { findExecutable, isDirectory } from "../../shared/fs-probes.js";
import { plural } from "../goose/format.js";
import type { AgentLaunch } from "./agent-process.js";

/** Refuses one more live session of the agent for `owner`, past its share or the agent's max_active; `owners` hold the live ones. */
export function checkRoom(config: AgentConfig, owners: string[], owner: string): void {
  const limit: SharedLimit = {
    table: `[agents.${config.name}]`,
    totalKey: "max_active",
    total: config.maxActive,
    shareKey: "max_active_per_principal",
    share: config.maxActivePerPrincipal,
    count: (n) => `${plural(n, "live session")} of agent "${config.name}"`,
  };
  const refused = refusal(limit, owners, owner);
  if (refused) {
    throw new GaggleError("LIMIT_REACHED", refused.message, {
      hint: refusalHint(limit, refused, "release one of yours with release_agent (list_agent_sessions lists them)"),
    });
  }
}

/** Refuses with SERVER_FAILED, saying what to do, an agent whose command is not found or whose folder is missing. */
export async function checkRunnable(config: AgentConfig, launch: AgentLaunch): Promise<void> {
  const lookup = await findExecutable(launch.command, launch.cwd, launch.env.PATH);
  if ("missing" in lookup) {
    throw new GaggleError("SERVER_FAILED", `agent "${config.name}": its command ${launch.command} is not found`, {
      hint: `install the agent, or set [agents.${config.name}] command`,
    });
  }
  const missing = folderProblem(config, await firstMissing([config.cwd, ...config.roots]));
  if (missing) throw new GaggleError("SERVER_FAILED", `agent "${config.name}": ${missing.problem}`, { hint: missing.hint });
}

/**
 * The first of an agent's folders (cwd, then roots) that is no directory: the agent could not run there (spawn would
 * blame its command). This one blocks, for `gaggle doctor` and start-up checks; a start asks without blocking.
 */
export function missingFolder(config: AgentConfig): { problem: string; hint: string } | undefined {
  return folderProblem(
    config,
    [config.cwd, ...config.roots].find((path) => !isDirectoryNow(path)),
  );
}

/** What is wrong when `missing`, the first of the agent's folders (cwd, then roots) found no directory, is one. */
function folderProblem(config: AgentConfig, missing: string | undefined): { problem: string; hint: string } | undefined {
  const key = `[agents.${config.name}]`;
  if (missing === undefined) return undefined;
  if (missing === config.cwd) return { problem: `its folder ${config.cwd} (${key} cwd) is not a directory`, hint: `create it, or set ${key} cwd` };
  return { problem: `its root ${missing} (${key} roots) is not a directory`, hint: `create it, or set ${key} roots` };
}

async function firstMissing(paths: string[]): Promise<string | undefined> {
  for (const path of paths) if (!(await isDirectory(path))) return path;
  return undefined;
}
