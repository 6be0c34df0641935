// The command policy (of the process and workspace children) and its one question: may this command run in this directory? Refusals name the segment and the rule.
import { isAbsolute } from "node:path";
import { isUnder } from "../../shared/fs-checks.js";
import { canonical, kernelTarget } from "../../shared/fs-probes.js";
import { GaggleError } from "../../shared/errors.js";
import { readCommandLine, type FileRedirect } from "../shell/command-grammar.js";
import { placesAfter, type ShellPlace } from "./directory-changes.js";

/**
 * `open`: no policy configured, everything runs. `rules`: a policy that validated. `broken`: a policy was
 * configured but did not parse or validate, so nothing runs (fail-closed) and every refusal says why.
 */
export type Policy =
  | { kind: "open" }
  | { kind: "rules"; source: string; allow: "*" | string[]; cwdAllow: string[] | undefined; redirectAllow?: string[] | undefined }
  | { kind: "broken"; source: string; reason: string };

/**
 * Throws PERMISSION_DENIED when the policy refuses `command` in `cwd` (absolute; as the shell knows it, symlinks and
 * all). The command is read with bash's grammar: every simple command in it must match an allow pattern, every
 * directory it changes to (cd, pushd, popd) must lie under cwd_allow, and every file a redirection opens must be
 * /dev/null or lie under cwd_allow or redirect_allow, judged from each folder the shell may be in by then, `&&` and
 * `||` followed as bash follows them (directory-changes.ts). What cannot be known before it runs (command
 * substitution, subshells, an expanded command name or redirection path) is refused.
 */
export async function checkPolicy(policy: Policy, command: string, cwd: string): Promise<void> {
  if (policy.kind === "open") return;
  if (policy.kind === "broken") {
    throw new GaggleError("PERMISSION_DENIED", `the command policy is invalid, so every command is refused: ${policy.reason}`, {
      hint: `fix ${policy.source} and restart gaggle`,
    });
  }
  const real = await canonical(cwd);
  if (policy.cwdAllow && !policy.cwdAllow.some((prefix) => isUnder(real, prefix))) {
    throw new GaggleError(
      "PERMISSION_DENIED",
      `cwd "${real}" is refused by the policy rule cwd_allow: it is under none of ${list(policy.cwdAllow)}`,
      {
        hint: `pass a cwd under one of those directories, or add the directory to cwd_allow in ${policy.source}`,
      },
    );
  }
  if (policy.allow === "*") return;
  const line = await readCommandLine(command);
  if ("unverifiable" in line) {
    throw new GaggleError(
      "PERMISSION_DENIED",
      `the command ${shorten(command)} uses ${line.unverifiable}, which the policy cannot check before it runs; only allow = "*" permits it`,
      { hint: "run the inner command on its own first, or pass its output through a file" },
    );
  }
  const patterns = policy.allow;
  const denied = line.commands.find((segment) => !patterns.some((pattern) => matches(pattern, segment.text)));
  if (denied !== undefined) {
    const rule = patterns.length === 0 ? "allow = [] (nothing is allowed)" : `allow (${list(patterns)})`;
    throw new GaggleError("PERMISSION_DENIED", `segment "${denied.text}" is refused by the policy rule ${rule}: no pattern matches it`, {
      hint: `run only commands the allow patterns match, or add a pattern for this one to allow in ${policy.source}`,
    });
  }
  const start: ShellPlace = { logical: cwd, real };
  const places = await placesAfter(line, start, policy.cwdAllow);
  if ("refused" in places) {
    throw new GaggleError("PERMISSION_DENIED", `${places.refused}, which the policy refuses`, {
      hint: `change only to directories under cwd_allow, written out (cd ./sub, not cd "$DIR") and joined with && to what must run there (cd sub && make && cd ..), or run the command with that cwd${policy.cwdAllow ? `; cwd_allow is ${list(policy.cwdAllow)}` : ""}`,
    });
  }
  const dirs = [...(policy.cwdAllow ?? []), ...(policy.redirectAllow ?? [])];
  for (const redirect of line.redirects) {
    // After a change to a folder known only at run time, a relative path could be anywhere; an absolute one is where it says.
    const from = places.at(redirect.at) ?? (isAbsolute(redirect.path) ? [start] : undefined);
    const outside = from === undefined ? undefined : await firstOutside(redirect, from, dirs);
    if (from === undefined || outside !== undefined) {
      const where =
        dirs.length === 0 ? "only /dev/null is allowed (no cwd_allow or redirect_allow)" : `only /dev/null and files under ${list(dirs)} are allowed`;
      const after =
        outside === undefined
          ? " after a directory change to a place known only when it runs"
          : outside.via
            ? ` from ${outside.real}, where ${JSON.stringify(outside.via)} may leave the shell,`
            : "";
      throw new GaggleError(
        "PERMISSION_DENIED",
        `the redirection ${redirect.op} ${JSON.stringify(redirect.path)}${after} is refused by the policy: ${where}`,
        {
          hint: `redirect into a directory under cwd_allow, or add one to redirect_allow in ${policy.source}`,
        },
      );
    }
  }
}

/** The first of `places` the file, opened from there as the kernel opens it (symlinks followed), is not /dev/null or under one of `dirs` from. */
async function firstOutside(redirect: FileRedirect, places: ShellPlace[], dirs: string[]): Promise<ShellPlace | undefined> {
  for (const place of places) {
    const path = await kernelTarget(place.real, redirect.path);
    if (path === undefined || !(path === "/dev/null" || dirs.some((dir) => isUnder(path, dir)))) return place;
  }
  return undefined;
}

const compiled = new Map<string, RegExp>();

/**
 * `*` matches any run of characters, spaces included; everything else is literal, runs of whitespace
 * count as one space. A pattern ending in ` *` also matches the bare command ("npm *" matches "npm").
 */
export function matches(pattern: string, segment: string): boolean {
  let regex = compiled.get(pattern);
  if (!regex) {
    const normal = pattern.trim().replace(/\s+/g, " ");
    const bare = normal.endsWith(" *") && normal.length > 2;
    const body = (bare ? normal.slice(0, -2) : normal)
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    regex = new RegExp(`^${body}${bare ? "(?: .*)?" : ""}$`, "s");
    compiled.set(pattern, regex);
  }
  return regex.test(segment);
}

function shorten(command: string): string {
  return JSON.stringify(command.length <= 120 ? command : `${command.slice(0, 117)}...`);
}

function list(values: string[]): string {
  const shown = values.slice(0, 8).map((value) => JSON.stringify(value));
  return shown.join(", ") + (values.length > 8 ? `, and ${values.length - 8} more` : "");
}
