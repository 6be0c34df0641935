// The built-in virtual children gaggle registers beside the configured ones, each answering through the router.
import type { Child, ChildEvents } from "../children/child.js";
import type { GaggleConfig } from "../config/index.js";
import { createGooseChild } from "./goose/index.js";
import { createProcessChild } from "./process/index.js";
import { stateDir } from "./state-dir.js";

/** What a virtual child is built from. */
export interface VirtualContext {
  config: GaggleConfig;
  events: ChildEvents;
  /** Absolute; created by the child that needs it. */
  stateDir: string;
}

const FACTORIES: Array<(context: VirtualContext) => Child | undefined> = [createProcessChild, createGooseChild];

export function createVirtualChildren(config: GaggleConfig, events: ChildEvents): Child[] {
  const context: VirtualContext = { config, events, stateDir: stateDir(config) };
  return FACTORIES.flatMap((create) => create(context) ?? []);
}

/** Virtual children whose settings say `expose = true`: their tools appear under their own names. */
export function exposedVirtualChildren(config: GaggleConfig): string[] {
  return (["process", "goose"] as const).filter((name) => config.virtual[name].expose);
}
