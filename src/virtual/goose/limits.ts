// Owns the circuit breakers against runaway agents: each refusal names its limit and the setting that sets it.
import { GaggleError } from "../../shared/errors.js";
import { refusal, refusalHint, type SharedLimit } from "../../shared/fair-share.js";
import { formatDuration, plural } from "./format.js";
import type { Gosling } from "./gosling.js";
import type { GooseSettings } from "../../config/virtual/goose.js";

type Limits = Pick<GooseSettings, "maxActive" | "maxActivePerPrincipal" | "maxTotal" | "maxTotalPerPrincipal" | "maxPrompts" | "maxRuntimeMinutes">;

/** Every gosling, and the principal each belongs to. */
export interface Owned {
  goslings: readonly Gosling[];
  ownerOf: (gosling: Gosling) => string;
}

/** Before run_goose or dispatch_agent (or a team) creates a gosling for `principal`. */
export function checkNewGosling(owned: Owned, principal: string, limits: Limits): void {
  checkShared(owned, principal, workingLimit(limits), (gosling) => gosling.working);
  checkShared(owned, principal, heldLimit(limits), (gosling) => gosling.status !== "released");
}

/** A limit of goslings, with how a principal at it frees one of its own places. */
interface GooseLimit extends SharedLimit<keyof typeof SETTINGS> {
  free: string;
}

/** Goslings working at once: every principal's together (max_active), and each principal's (its share). */
function workingLimit(limits: Limits): GooseLimit {
  return {
    table: "[virtual.goose]",
    totalKey: "max_active",
    total: limits.maxActive,
    shareKey: "max_active_per_principal",
    share: limits.maxActivePerPrincipal,
    count: (n) => `${plural(n, "gosling")} working`,
    free: "wait for one of yours to finish (get_gosling_status) or release one (release_gosling)",
  };
}

/** Goslings held (not released) at once, every principal's together (max_total) and each principal's. */
function heldLimit(limits: Limits): GooseLimit {
  return {
    table: "[virtual.goose]",
    totalKey: "max_total",
    total: limits.maxTotal,
    shareKey: "max_total_per_principal",
    share: limits.maxTotalPerPrincipal,
    count: (n) => `${plural(n, "gosling")} not released`,
    free: "release the goslings you are done with (release_gosling, terminate_all_goslings)",
  };
}

function checkShared(owned: Owned, principal: string, limit: GooseLimit, counted: (gosling: Gosling) => boolean): void {
  const refused = refusal(
    limit,
    owned.goslings.filter(counted).map((gosling) => owned.ownerOf(gosling)),
    principal,
  );
  if (!refused) return;
  throw new LimitReached(refused.message, refusalHint(limit, refused, limit.free), refused.key);
}

/** Before send_prompt_to_gosling adds a prompt. */
export function checkFollowUp(gosling: Gosling, owned: Owned, limits: Limits): void {
  if (gosling.status === "released") {
    throw new GaggleError("INVALID_ARGS", `gosling ${gosling.id} was released (${gosling.releaseNote ?? "released"}) and takes no more prompts`, {
      hint: `its transcript stays readable with get_gosling_output; start a new gosling with run_goose`,
    });
  }
  if (gosling.prompts.length >= limits.maxPrompts) {
    throw limitReached(
      `gosling ${gosling.id} has had ${plural(gosling.prompts.length, "prompt")}, the most max_prompts allows`,
      "max_prompts",
      limits.maxPrompts,
      "start a new gosling with run_goose",
    );
  }
  const runtimeMs = gosling.runtimeMs();
  if (runtimeMs >= limits.maxRuntimeMinutes * 60_000) {
    throw limitReached(
      `gosling ${gosling.id} has worked ${formatDuration(runtimeMs)}, the most max_runtime_minutes allows`,
      "max_runtime_minutes",
      limits.maxRuntimeMinutes,
      "start a new gosling with run_goose",
    );
  }
  if (!gosling.working) checkShared(owned, owned.ownerOf(gosling), workingLimit(limits), (other) => other.working);
}

/** A refusal by one of the limits: `setting` names it, as [virtual.goose] spells it. */
export class LimitReached extends GaggleError {
  constructor(
    message: string,
    hint: string,
    readonly setting: keyof typeof SETTINGS,
  ) {
    super("LIMIT_REACHED", message, { hint });
  }

  /** Goslings at work and goslings held are freed by others in time; a gosling's own prompts and runtime are not. */
  get freesUp(): boolean {
    return SETTINGS[this.setting].freesUp;
  }
}

const SETTINGS = {
  max_active: { freesUp: true },
  max_active_per_principal: { freesUp: true },
  max_total: { freesUp: true },
  max_total_per_principal: { freesUp: true },
  max_prompts: { freesUp: false },
  max_runtime_minutes: { freesUp: false },
} as const;

function limitReached(what: string, setting: keyof typeof SETTINGS, value: number, next: string): LimitReached {
  return new LimitReached(`${what} ([virtual.goose] ${setting} = ${value})`, `${next}, or raise [virtual.goose] ${setting}`, setting);
}
