// The built-in children gaggle registers beside the configured ones, each answering through the router: one entry
// per `[virtual.NAME]` table of config/virtual/index.ts, its child in its own folder.
import type { Child } from "../children/child.js";
import type { Switchboard } from "../children/switchboard.js";
import { stateDir, type GaggleConfig } from "../config/index.js";
import { VIRTUAL_CHILD_NAMES, type BuiltInName, type VirtualSettings } from "../config/virtual/index.js";
import type { BuiltIn, BuiltInCheck, MemberUrls, VirtualContext } from "./context.js";
import { agentsChild } from "./agents/index.js";
import { duckdbChild } from "./duckdb/index.js";
import { gooseChild } from "./goose/index.js";
import { imagenChild } from "./imagen/index.js";
import { processChild } from "./process/index.js";
import { teamChild } from "./team/index.js";
import { workspaceChild } from "./workspace/index.js";

export type { MemberUrl, MemberUrls } from "./context.js";

const BUILT_INS: { [K in BuiltInName]: BuiltIn<VirtualSettings[K]> } = {
  process: processChild,
  goose: gooseChild,
  team: teamChild,
  duckdb: duckdbChild,
  imagen: imagenChild,
  workspace: workspaceChild,
  agents: agentsChild,
};

/** The enabled built-in children, made in the order of their tables, so that one built on another finds it. */
export function createVirtualChildren(config: GaggleConfig, switchboard: Switchboard, members: MemberUrls): Child[] {
  const context: VirtualContext = { config, switchboard, stateDir: stateDir(config), members };
  const built = new Map<string, Child>();
  for (const name of VIRTUAL_CHILD_NAMES) {
    const child = config.virtual[name].enabled ? create(name, config, context, built) : undefined;
    if (child) built.set(name, child);
  }
  return [...built.values()];
}

function create<K extends BuiltInName>(name: K, config: GaggleConfig, context: VirtualContext, built: ReadonlyMap<string, Child>): Child | undefined {
  return BUILT_INS[name].create(config.virtual[name], context, built);
}

/** An enabled built-in child as validate and doctor report it. */
export interface BuiltInReport extends BuiltInCheck {
  name: BuiltInName;
}

/** The built-in children a gaggle of this config would have, in the order it makes them, each with its check. */
export function checkBuiltIns(config: GaggleConfig): BuiltInReport[] {
  const present = new Set<string>();
  return VIRTUAL_CHILD_NAMES.flatMap((name) => {
    const found = config.virtual[name].enabled ? check(name, config, present) : undefined;
    if (!found) return [];
    present.add(name);
    return [{ name, ...found }];
  });
}

function check<K extends BuiltInName>(name: K, config: GaggleConfig, present: ReadonlySet<string>): BuiltInCheck | undefined {
  const { check } = BUILT_INS[name];
  return check ? check(config.virtual[name], present, config) : { ok: true, notes: [] };
}

/**
 * Settings of the enabled built-in children that validate as config but would leave a child unable to work; each
 * problem names its source. At serve time such a child still starts, refusing what it cannot do safely.
 */
export function virtualSettingsProblems(config: GaggleConfig): string[] {
  return VIRTUAL_CHILD_NAMES.flatMap((name) => (config.virtual[name].enabled ? problems(name, config) : []));
}

function problems<K extends BuiltInName>(name: K, config: GaggleConfig): string[] {
  return BUILT_INS[name].problems?.(config.virtual[name], config) ?? [];
}
