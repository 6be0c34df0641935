// The built-in virtual children gaggle registers beside the configured ones, each answering through the router.
import type { Child, ChildEvents, MemberIdentity } from "../children/child.js";
import { VIRTUAL_CHILD_NAMES, type GaggleConfig } from "../config/index.js";
import { createGooseChild } from "./goose/index.js";
import { createProcessChild, processSettingsProblems } from "./process/index.js";
import { createTeamChild } from "./team/index.js";
import { stateDir } from "./state-dir.js";

export interface MemberUrl {
  url: string;
  /** The URL stops working: for a member that was removed. */
  revoke(): void;
}

/** Issues URLs on which an agent gaggle starts connects back to it as one team member. */
export interface MemberUrls {
  urlFor(identity: MemberIdentity): Promise<MemberUrl>;
}

/** What a virtual child is built from. */
export interface VirtualContext {
  config: GaggleConfig;
  events: ChildEvents;
  /** Absolute; created by the child that needs it. */
  stateDir: string;
  members: MemberUrls;
  /** The virtual children built before this one, by name (a team is built on the goose child). */
  siblings: ReadonlyMap<string, Child>;
}

/** In order: a factory sees the children built before it. */
const FACTORIES: Array<(context: VirtualContext) => Child | undefined> = [createProcessChild, createGooseChild, createTeamChild];

export function createVirtualChildren(config: GaggleConfig, events: ChildEvents, members: MemberUrls): Child[] {
  const siblings = new Map<string, Child>();
  for (const create of FACTORIES) {
    const child = create({ config, events, stateDir: stateDir(config), members, siblings });
    if (child) siblings.set(child.name, child);
  }
  return [...siblings.values()];
}

/** Virtual children whose settings say `expose = true`: their tools appear under their own names. */
export function exposedVirtualChildren(config: GaggleConfig): string[] {
  return VIRTUAL_CHILD_NAMES.filter((name) => config.virtual[name].expose);
}

/**
 * Settings of the built-in children that validate as config but would leave a child unable to work; each
 * problem names its source. At serve time such a child still starts, refusing what it cannot do safely.
 */
export function virtualSettingsProblems(config: GaggleConfig): string[] {
  return processSettingsProblems(config);
}
