// Where the shell may be at each point of a command line: where it started, and wherever each cd, pushd or popd
// before that point may have left it (failed or not), every directory it may reach judged against cwd_allow.
import { resolve } from "node:path";
import { isUnder, kernelTarget, realTarget } from "../../shared/fs-checks.js";
import type { DirectoryChange, SimpleCommand } from "../shell/command-grammar.js";

/** A folder the shell may be in: as `cd` leaves $PWD (`logical`), and where it really is. */
export interface ShellPlace {
  logical: string;
  real: string;
  /** The directory change that may have brought the shell here; absent for where it started. */
  via?: string;
}

/** Past this many folders the line is refused: each cd may double them, and a real line has a few. */
const MAX_PLACES = 64;

export interface Places {
  /** Every folder the shell may be in at `at` (a position in the line); undefined after a change to a folder known only at run time. */
  before(at: number): ShellPlace[] | undefined;
}

/**
 * The folders the shell may be in through `line`, starting at `start`. A directory change is refused when a folder
 * it may reach lies outside `cwdAllow`, or, with `cwdAllow`, when its folder is known only at run time (`cd "$D"`).
 */
export function placesAfter(line: { commands: SimpleCommand[] }, start: ShellPlace, cwdAllow: string[] | undefined): Places | { refused: string } {
  const steps: Array<{ at: number; places: ShellPlace[] | undefined }> = [{ at: -1, places: [start] }];
  for (const command of line.commands) {
    if (!command.chdir) continue;
    const now = steps.at(-1)!.places;
    if (command.chdir.to === undefined || now === undefined) {
      if (cwdAllow) return { refused: `"${command.text}" goes to a directory known only when it runs` };
      steps.push({ at: command.at, places: undefined });
      continue;
    }
    const reached = now.flatMap((place) => destinations(place, command.chdir!, command.text));
    if (cwdAllow) {
      const outside = reached.find((place) => !cwdAllow.some((dir) => isUnder(place.real, dir)));
      if (outside) return { refused: `"${command.text}" may leave the shell in ${outside.real}, under none of the cwd_allow directories` };
    }
    const places = [...now];
    for (const place of reached) if (!places.some((known) => known.real === place.real && known.logical === place.logical)) places.push(place);
    if (places.length > MAX_PLACES) return { refused: `"${command.text}" is one directory change too many to follow (over ${MAX_PLACES} places)` };
    steps.push({ at: command.at, places });
  }
  return { before: (at) => steps.findLast((step) => step.at < at)!.places };
}

/**
 * Where `change` may take the shell from `place`: `..` taken textually from $PWD (cd's default), symlinks followed as
 * the kernel follows them (cd -P, and bash's fallback when the textual path fails), and each CDPATH folder for a
 * name that does not start with `/`, `./` or `../`. A folder that cannot exist (a dangling symlink) is left out: cd
 * there fails and the shell stays.
 */
function destinations(place: ShellPlace, change: DirectoryChange, via: string): ShellPlace[] {
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
      add(logical, realTarget(logical));
    }
    const real = kernelTarget(base === place.logical ? place.real : (realTarget(base) ?? base), to);
    add(real ?? "", real);
  }
  return found;
}
