// Owns checking gg_team_manage and gg_team_message arguments as goldengoose does, before anything starts.
import { GaggleError } from "../../shared/errors.js";
import { TEAM_ID_PATTERN } from "./records.js";
import type { ModelPreset } from "../../config/virtual/team.js";
import type { ManageArgs } from "./tool-args.js";

/** Fields that only mean something when adding a member; in remove mode each one is refused by name. */
export const ADD_ONLY_FIELDS = [
  "agent",
  "title",
  "prompt",
  "image_paths",
  "model_preset",
  "worktree_name",
  "use_existing_worktree",
  "unsubscribe_from_compaction_notifications",
] as const;

export const WORKTREE_NAME_PATTERN = /^[a-z0-9][a-z0-9-_]*$/;

/** A pattern as people write it: without its anchors. */
export function patternText(pattern: RegExp): string {
  return pattern.source.replace(/^\^|\$$/g, "");
}

export interface AddRequest {
  mode: "add";
  teamId: string;
  /** The [agents.NAME] the member runs as over ACP; undefined for a gosling. */
  agent: string | undefined;
  title: string | undefined;
  prompt: string | undefined;
  imagePaths: string[];
  modelPreset: string | undefined;
  worktree: { name: string; existing: boolean } | undefined;
  compactionNotices: boolean;
}

export interface RemoveRequest {
  mode: "remove";
  teamId: string;
  agentIds: string[];
}

function invalid(message: string, hint?: string): GaggleError {
  return new GaggleError("INVALID_ARGS", message, hint ? { hint } : {});
}

export function checkTeamId(teamId: string): string {
  if (TEAM_ID_PATTERN.test(teamId)) return teamId;
  throw invalid(`team_id "${teamId}" is not valid: it must match ${patternText(TEAM_ID_PATTERN)}`);
}

/** Add mode unless `remove_agent_ids` is given. Arguments already fit the tool's input schema. */
export function parseManage(args: ManageArgs): AddRequest | RemoveRequest {
  const teamId = checkTeamId(args.team_id);
  if (args.remove_agent_ids !== undefined) {
    const given = ADD_ONLY_FIELDS.filter((field) => args[field] !== undefined);
    if (given.length > 0) {
      throw invalid(
        `${listOf(given)} cannot be provided when remove_agent_ids is provided`,
        "remove mode takes team_id and remove_agent_ids only; add members in a separate call",
      );
    }
    const ids = [...new Set(args.remove_agent_ids)];
    if (ids.length === 0) throw invalid("remove_agent_ids must contain at least one agent id", "gg_team_status lists the members' agent ids");
    return { mode: "remove", teamId, agentIds: ids };
  }
  const existing = args.use_existing_worktree === true;
  const name = worktreeName(args.worktree_name);
  if (existing && name === undefined) throw invalid("worktree_name is required when use_existing_worktree is true");
  const agent = blankless(args.agent);
  if (agent !== undefined && args.model_preset !== undefined) {
    throw invalid(
      "model_preset cannot be provided with agent: presets are Goose's --provider and --model",
      "leave model_preset out; the agent's own config chooses its model",
    );
  }
  return {
    mode: "add",
    teamId,
    agent,
    title: blankless(args.title),
    prompt: blankless(args.prompt),
    imagePaths: args.image_paths ?? [],
    modelPreset: args.model_preset,
    worktree: name === undefined ? undefined : { name, existing },
    compactionNotices: args.unsubscribe_from_compaction_notifications !== true,
  };
}

/** Lower-cased; blank means none; then it must match [a-z0-9][a-z0-9-_]*. */
export function worktreeName(raw: string | undefined): string | undefined {
  const name = blankless(raw)?.toLowerCase();
  if (name === undefined) return undefined;
  if (!WORKTREE_NAME_PATTERN.test(name) || name.length > 64) {
    throw invalid(
      `worktree_name "${raw}" is not valid: lower-cased it must match ${patternText(WORKTREE_NAME_PATTERN)} (at most 64 characters)`,
      'for example "fix-login" or "api_v2"',
    );
  }
  return name;
}

export function resolvePreset(name: string | undefined, presets: Record<string, ModelPreset>): ModelPreset | undefined {
  if (name === undefined) return undefined;
  // Own keys only: a name every object has ("constructor") is no preset.
  const preset = Object.hasOwn(presets, name) ? presets[name] : undefined;
  if (preset) return preset;
  const names = Object.keys(presets);
  throw invalid(
    `Unknown model_preset "${name}". Available presets: ${names.length > 0 ? names.join(", ") : "none (none are configured)"}`,
    names.length > 0
      ? "leave model_preset out to use [virtual.goose] provider and model"
      : "add [virtual.team.model_presets.NAME] with provider and model to the config",
  );
}

function blankless(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** "a", "a and b", "a, b and c" */
function listOf(items: readonly string[]): string {
  return items.length === 1 ? items[0]! : `${items.slice(0, -1).join(", ")} and ${items.at(-1)!}`;
}
