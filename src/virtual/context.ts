// What every built-in child is built from.
import type { MemberIdentity } from "../children/child.js";
import type { Switchboard } from "../children/switchboard.js";
import type { GaggleConfig } from "../config/index.js";

export interface MemberUrl {
  url: string;
  /** The URL stops working: for a member that was removed. */
  revoke(): void;
}

/** Issues URLs on which an agent gaggle starts connects back to it as one team member. */
export interface MemberUrls {
  urlFor(identity: MemberIdentity): Promise<MemberUrl>;
}

export interface VirtualContext {
  config: GaggleConfig;
  /** Children report through it, and follow on it what clients change. */
  switchboard: Switchboard;
  /** Absolute; created by the child that needs it. */
  stateDir: string;
  members: MemberUrls;
}
