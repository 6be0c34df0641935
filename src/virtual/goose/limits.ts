// Owns the circuit breakers against runaway agents: each refusal names its limit and the setting that sets it.
import { GaggleError } from "../../shared/errors.js";
import { formatDuration, plural } from "./format.js";
import type { Gosling } from "./gosling.js";
import type { GooseSettings } from "../../config/virtual/goose.js";

type Limits = Pick<GooseSettings, "maxActive" | "maxTotal" | "maxPrompts" | "maxRuntimeMinutes">;

/** Before run_goose or dispatch_agent creates a gosling. */
export function checkNewGosling(goslings: readonly Gosling[], limits: Limits): void {
  const working = goslings.filter((gosling) => gosling.working).length;
  if (working >= limits.maxActive) {
    throw limitReached(
      `${plural(working, "gosling")} already working, the most max_active allows`,
      "max_active",
      limits.maxActive,
      "wait for one to finish (get_gosling_status) or release one (release_gosling)",
    );
  }
  const held = goslings.filter((gosling) => gosling.status !== "released").length;
  if (held >= limits.maxTotal) {
    throw limitReached(
      `${plural(held, "gosling")} held (not released), the most max_total allows`,
      "max_total",
      limits.maxTotal,
      "release the goslings you are done with (release_gosling, terminate_all_goslings)",
    );
  }
}

/** Before send_prompt_to_gosling adds a prompt. */
export function checkFollowUp(gosling: Gosling, goslings: readonly Gosling[], limits: Limits): void {
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
  const working = goslings.filter((other) => other.working).length;
  if (!gosling.working && working >= limits.maxActive) {
    throw limitReached(
      `${plural(working, "other gosling")} already working, the most max_active allows`,
      "max_active",
      limits.maxActive,
      "wait for one to finish (get_gosling_status) or release one (release_gosling)",
    );
  }
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
  max_total: { freesUp: true },
  max_prompts: { freesUp: false },
  max_runtime_minutes: { freesUp: false },
} as const;

function limitReached(what: string, setting: keyof typeof SETTINGS, value: number, next: string): LimitReached {
  return new LimitReached(`${what} ([virtual.goose] ${setting} = ${value})`, `${next}, or raise [virtual.goose] ${setting}`, setting);
}
