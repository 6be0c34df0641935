// What every built-in child is built from.
import type { Child, MemberIdentity } from "../children/child.js";
import type { Switchboard } from "../children/switchboard.js";
import type { GaggleConfig } from "../config/index.js";

export interface MemberUrl {
  url: string;
  /** The URL stops working: for a member that was removed. */
  revoke(): void;
}

/**
 * Whose team a member principal is in: its lead sees and stops the work that member started, and the team's other
 * members see it (see Visibility).
 */
export interface TeamLeads {
  /** The principal whose team the member with principal `member` is (or was) in; undefined for any other principal. */
  leadOf(member: string): string | undefined;
  /** Whether two member principals are (or were) members of one team. */
  sameTeam(member: string, other: string): boolean;
}

/** Issues URLs on which an agent gaggle starts connects back to it as one team member. */
export interface MemberUrls extends TeamLeads {
  /** A URL for `identity`, a member of a team of principal `lead`. */
  urlFor(identity: MemberIdentity, lead: string): Promise<MemberUrl>;
}

/** Why a built-in child is not made: the owner logs it (see BuiltInChildren). */
export interface LeftOut {
  leftOut: string;
  /** What the reason is about, as log fields (`{ command: "goose" }`). */
  about?: Record<string, unknown>;
}

export interface VirtualContext {
  /** The config the child is made from. */
  config: GaggleConfig;
  /** The config in force now: a reload changes it without remaking every child (see Visibility). */
  inForce(): GaggleConfig;
  /** Children report through it, and follow on it what clients change. */
  switchboard: Switchboard;
  /** Absolute; created by the child that needs it. */
  stateDir: string;
  members: MemberUrls;
}

/** What `gaggle validate` and `gaggle doctor` find of an enabled built-in child, without starting it. */
export interface BuiltInCheck {
  /** Whether it can work here: false when something it needs is missing (an optional module, a command). */
  ok: boolean;
  /** What it found to work with (DuckDB's version, ripgrep's path), or what it lacks and what to do. */
  notes: string[];
}

/**
 * One built-in child, registered in virtual/index.ts under the name of its `[virtual.NAME]` table: made from its
 * settings when they enable it. Its settings schema is config/virtual/NAME.ts.
 */
export interface BuiltIn<Settings> {
  /**
   * The child, or why it is left out (a command not found), or undefined when it is left out with nothing to say
   * (no agent configured). `built` holds the built-in children made before it, by name, for one built on another.
   */
  create(settings: Settings, context: VirtualContext, built: ReadonlyMap<string, Child>): Child | LeftOut | undefined;
  /**
   * What the child is made of beyond its own table, read from the config by create (the `[agents.NAME]` tables
   * for `agents`): a reload that changes it makes the child again.
   */
  madeFrom?(config: GaggleConfig): unknown;
  /**
   * Takes a change of what it is made from (madeFrom, its own table unchanged) in the running child, resolving once
   * done; undefined when it cannot, and the child is made again.
   */
  follow?(child: Child, config: GaggleConfig): Promise<void> | undefined;
  /**
   * What `gaggle validate` reports of settings that validate as config but would leave the child unable to work;
   * each problem names its source. At serve time such a child still starts, refusing what it cannot do safely.
   */
  problems?(settings: Settings, config: GaggleConfig): string[];
  /**
   * What it works with here, checked as create would find it; undefined when create would leave it out. `present`
   * names the built-in children checked before it that would be there. Without it, an enabled child is ok.
   */
  check?(settings: Settings, present: ReadonlySet<string>, config: GaggleConfig): BuiltInCheck | undefined;
}
