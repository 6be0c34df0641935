// The built-in children gaggle registers beside the configured ones, each answering through the router: one entry
// per `[virtual.NAME]` table of config/virtual/index.ts, its child in its own folder.
import type { Child } from "../children/child.js";
import type { Switchboard } from "../children/switchboard.js";
import { stateDir, type GaggleConfig } from "../config/index.js";
import { logger } from "../shared/log.js";
import { VIRTUAL_CHILD_NAMES, type BuiltInName, type VirtualSettings } from "../config/virtual/index.js";
import type { BuiltIn, BuiltInCheck, LeftOut, MemberUrls, VirtualContext } from "./context.js";
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
  return new BuiltInChildren(config, switchboard, members).children();
}

/**
 * What a new config changed of the built-in children: the ones made (anew or again), the ones gone, and the ones
 * that took the change in place (each with its settling).
 */
export interface BuiltInChanges {
  made: Child[];
  removed: string[];
  followed: Array<{ name: string; done: Promise<void> }>;
}

/**
 * The owner of the built-in children of a gaggle across reloads. A child is made again when its settings change
 * (`expose` aside) or when a child it was built on (one its create asked for) is made again or gone; any other is
 * left running.
 */
export class BuiltInChildren {
  private readonly made = new Map<BuiltInName, { child: Child; builtOn: ReadonlySet<string> }>();
  /**
   * Why each child left out was, as last said. A left-out child is tried again at each reload (Goose installed
   * since is found), and the same reason is said again only at debug.
   */
  private readonly leftOut = new Map<BuiltInName, string>();

  constructor(
    private config: GaggleConfig,
    private readonly switchboard: Switchboard,
    private readonly members: MemberUrls,
  ) {
    const context = this.contextOf(config);
    for (const name of VIRTUAL_CHILD_NAMES) if (config.virtual[name].enabled) this.make(name, context);
  }

  children(): Child[] {
    return [...this.made.values()].map(({ child }) => child);
  }

  reconfigure(next: GaggleConfig): BuiltInChanges {
    const before = this.config;
    this.config = next;
    const context = this.contextOf(next);
    const changes: BuiltInChanges = { made: [], removed: [], followed: [] };
    const redone = new Set<string>();
    for (const name of VIRTUAL_CHILD_NAMES) {
      const old = this.made.get(name);
      const remade = old === undefined || tableOf(before, name) !== tableOf(next, name) || [...old.builtOn].some((under) => redone.has(under));
      const moved = !remade && madeOf(before, name) !== madeOf(next, name);
      if (!remade && !moved) continue;
      const done = moved ? BUILT_INS[name].follow?.(old.child, next) : undefined;
      if (done) {
        changes.followed.push({ name, done });
        continue;
      }
      this.made.delete(name);
      const child = next.virtual[name].enabled ? this.make(name, context) : undefined;
      if (child) changes.made.push(child);
      else if (old) changes.removed.push(name);
      if (old || child) redone.add(name);
    }
    return changes;
  }

  private contextOf(config: GaggleConfig): VirtualContext {
    return { config, inForce: () => this.config, switchboard: this.switchboard, stateDir: stateDir(config), members: this.members };
  }

  /** Makes `name`, noting which children made before it its create asked for. */
  private make<K extends BuiltInName>(name: K, context: VirtualContext): Child | undefined {
    const built = new AskedFor(this.children().map((child) => [child.name, child]));
    const made = BUILT_INS[name].create(context.config.virtual[name], context, built);
    if (made === undefined || isLeftOut(made)) {
      if (made) this.sayLeftOut(name, made);
      return undefined;
    }
    this.leftOut.delete(name);
    this.made.set(name, { child: made, builtOn: built.asked });
    return made;
  }

  private sayLeftOut(name: BuiltInName, { leftOut, about }: LeftOut): void {
    const again = this.leftOut.get(name) === leftOut;
    this.leftOut.set(name, leftOut);
    logger({ child: name })[again ? "debug" : "info"]({ ...about }, `the ${name} child is left out: ${leftOut}`);
  }
}

/** A built-in child's table but `expose`, which only changes how it is listed (see ProxyCatalog). */
function tableOf(config: GaggleConfig, name: BuiltInName): string {
  return JSON.stringify({ ...config.virtual[name], expose: undefined });
}

/** What else of the config a built-in child says it is made from (see BuiltIn.madeFrom). */
function madeOf(config: GaggleConfig, name: BuiltInName): string {
  return JSON.stringify(BUILT_INS[name].madeFrom?.(config) ?? null);
}

function isLeftOut(made: Child | LeftOut): made is LeftOut {
  return "leftOut" in made;
}

/** A map that notes every name asked of it. */
class AskedFor extends Map<string, Child> {
  readonly asked = new Set<string>();

  override get(name: string): Child | undefined {
    this.asked.add(name);
    return super.get(name);
  }

  override has(name: string): boolean {
    this.asked.add(name);
    return super.has(name);
  }
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
