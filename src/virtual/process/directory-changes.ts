// Where the shell may be as each command of a line runs: where it started, and wherever the cd, pushd and popd that
// may have run before it left it, following `&&` and `||` as bash does; every directory it may reach judged against
// cwd_allow.
import { resolve } from "node:path";
import { isUnder } from "../../shared/fs-checks.js";
import { kernelTarget, realTarget } from "../../shared/fs-probes.js";
import type { DirectoryChange, SimpleCommand } from "../shell/command-grammar.js";

/** A folder the shell may be in: as `cd` leaves $PWD (`logical`), and where it really is. */
export interface ShellPlace {
  logical: string;
  real: string;
  /** The directory change that may have brought the shell here; absent for where it started. */
  via?: string;
}

/** Every folder the shell may be in; undefined after a change to a folder known only at run time. */
type Where = ShellPlace[] | undefined;

/** Past this many folders the line is refused: each cd may double them, and a real line has a few. */
const MAX_PLACES = 64;

export interface Places {
  /**
   * Every folder the shell may be in when the command written at `at` (a position in the line) runs and opens its
   * redirections; undefined when a change to a folder known only at run time may have come before.
   */
  at(at: number): ShellPlace[] | undefined;
}

/**
 * The folders the shell may be in through `line`, starting at `start`. A pipeline after `&&` runs only where the
 * one before may leave the shell on success, after `||` only where it may leave it on failure; after `;`, `&` or a
 * newline, wherever the list before may leave it. Any command may fail; a cd that fails leaves the shell where it
 * was. The commands of a pipeline run in subshells, but are judged as though each cd in them may move the shell for
 * the rest of the line. A directory change is refused when a folder it may reach lies outside `cwdAllow`, or, with
 * `cwdAllow`, when its folder is known only at run time (`cd "$D"`).
 */
export async function placesAfter(
  line: { commands: SimpleCommand[] },
  start: ShellPlace,
  cwdAllow: string[] | undefined,
): Promise<Places | { refused: string }> {
  const steps: Array<{ at: number; places: Where }> = [];
  const { commands } = line;
  // Where the list so far may leave the shell when its last pipeline succeeded, and when it failed.
  let succeeded: Where = [start];
  let failed: Where = [];
  // Whether a directory change comes before the command judged: the line's start is then left only if it succeeds.
  let changed = false;
  try {
    for (let first = 0; first < commands.length;) {
      const head = commands[first]!;
      let end = first + 1;
      while (end < commands.length && commands[end]!.joint === "|") end++;
      const from = head.joint === "&&" ? succeeded : head.joint === "||" ? failed : union(succeeded, failed, head);
      let outcome: [Where, Where];
      if (end === first + 1) {
        steps.push({ at: head.at, places: from });
        outcome = await after(head, from, cwdAllow, changed);
        changed ||= head.chdir !== undefined;
      } else {
        let now = from;
        for (const command of commands.slice(first, end)) {
          steps.push({ at: command.at, places: now });
          now = union(...(await after(command, now, cwdAllow, changed)), command);
          changed ||= command.chdir !== undefined;
        }
        outcome = [now, now];
      }
      const [ok, notOk] = head.negated ? [outcome[1], outcome[0]] : outcome;
      // A pipeline skipped keeps the status of the list before it, and the shell where that left it.
      if (head.joint === "&&") [succeeded, failed] = [ok, union(failed, notOk, head)];
      else if (head.joint === "||") [succeeded, failed] = [union(succeeded, ok, head), notOk];
      else [succeeded, failed] = [ok, notOk];
      first = end;
    }
  } catch (error) {
    if (error instanceof Refusal) return { refused: error.message };
    throw error;
  }
  return {
    at: (at) => {
      // The last command written at or before `at`: the one a redirection belongs to.
      let low = 0;
      let high = steps.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (steps[middle]!.at <= at) low = middle + 1;
        else high = middle;
      }
      return low === 0 ? [start] : steps[low - 1]!.places;
    },
  };
}

/** Why a line is refused, thrown out of the walk over its commands. */
class Refusal extends Error {}

/**
 * Where the shell may be after `command` runs from `from`: when it succeeds, and when it fails. `changed`: a directory
 * change comes before it in the line.
 */
async function after(command: SimpleCommand, from: Where, cwdAllow: string[] | undefined, changed: boolean): Promise<[Where, Where]> {
  const change = command.chdir;
  if (!change) return [from, from];
  if (change.to === undefined || from === undefined) {
    if (cwdAllow) throw new Refusal(`"${command.text}" goes to a directory known only when it runs`);
    return [undefined, from];
  }
  const reached: ShellPlace[] = [];
  for (const place of from) {
    const found = await destinations(place, change, command.text);
    for (const there of found) {
      if (cwdAllow && !cwdAllow.some((dir) => isUnder(there.real, dir))) {
        const origin = place.via
          ? ` (from ${place.real}, where "${place.via}" may leave it)`
          : changed
            ? ` (from ${place.real}, where the shell still is if a directory change before it fails or is skipped)`
            : "";
        throw new Refusal(`"${command.text}" may leave the shell in ${there.real}${origin}, under none of the cwd_allow directories`);
      }
    }
    // A cd that can reach no folder now (through a dangling symlink) is judged as staying: what follows its success
    // is still judged from somewhere, since the folder may appear before it runs.
    for (const there of found.length > 0 ? found : [place]) add(reached, there, command);
  }
  return [reached, from];
}

/** Every folder of `a` and `b`, each once. */
function union(a: Where, b: Where, command: SimpleCommand): Where {
  if (a === undefined || b === undefined) return undefined;
  const places = [...a];
  for (const place of b) add(places, place, command);
  return places;
}

function add(places: ShellPlace[], place: ShellPlace, command: SimpleCommand): void {
  if (places.some((known) => known.real === place.real && known.logical === place.logical)) return;
  places.push(place);
  if (places.length > MAX_PLACES)
    throw new Refusal(`by "${command.text}" the shell may be in over ${MAX_PLACES} folders, too many directory changes to follow`);
}

/**
 * Where `change` may take the shell from `place`: `..` taken textually from $PWD (cd's default), symlinks followed as
 * the kernel follows them (cd -P, and bash's fallback when the textual path fails), and each CDPATH folder for a
 * name that does not start with `/`, `./` or `../`. A folder that cannot exist (a dangling symlink) is left out: cd
 * there fails and the shell stays.
 */
async function destinations(place: ShellPlace, change: DirectoryChange, via: string): Promise<ShellPlace[]> {
  const to = change.to!;
  const found: ShellPlace[] = [];
  const add = (logical: string, real: string | undefined) => {
    if (real !== undefined) found.push({ logical, real, via });
  };
  const bases = [place.logical];
  if (!/^(\/|\.\.?(\/|$))/.test(to)) {
    // CDPATH as the shell inherits it from gaggle: a line that changes it is refused before this (command-grammar.ts).
    for (const entry of process.env.CDPATH?.split(":") ?? []) bases.push(resolve(place.logical, entry));
  }
  for (const base of bases) {
    if (!change.physical) {
      const logical = resolve(base, to);
      add(logical, await realTarget(logical));
    }
    const real = await kernelTarget(base === place.logical ? place.real : ((await realTarget(base)) ?? base), to);
    add(real ?? "", real);
  }
  return found;
}
