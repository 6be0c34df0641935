// The command policy (of the process and workspace children) and its one question: may this command run in this directory? Refusals name the segment and the rule.
import { resolve } from "node:path";
import { isUnder, realTarget } from "../../shared/fs-checks.js";
import { GaggleError } from "../../shared/errors.js";
import { readCommandLine, type FileRedirect } from "../shell/command-grammar.js";

/**
 * `open`: no policy configured, everything runs. `rules`: a policy that validated. `broken`: a policy was
 * configured but did not parse or validate, so nothing runs (fail-closed) and every refusal says why.
 */
export type Policy =
  | { kind: "open" }
  | { kind: "rules"; source: string; allow: "*" | string[]; cwdAllow: string[] | undefined; redirectAllow?: string[] | undefined }
  | { kind: "broken"; source: string; reason: string };

/**
 * Throws PERMISSION_DENIED when the policy refuses `command` in `cwd` (absolute, symlinks resolved). The command
 * is read with bash's grammar: every simple command in it must match an allow pattern, and every file a
 * redirection opens must be /dev/null or lie under cwd_allow or redirect_allow. What cannot be known before it
 * runs (command substitution, subshells, an expanded command name or redirection path) is refused.
 */
export async function checkPolicy(policy: Policy, command: string, cwd: string): Promise<void> {
  if (policy.kind === "open") return;
  if (policy.kind === "broken") {
    throw new GaggleError("PERMISSION_DENIED", `the command policy is invalid, so every command is refused: ${policy.reason}`, {
      hint: `fix ${policy.source} and restart gaggle`,
    });
  }
  if (policy.cwdAllow && !policy.cwdAllow.some((prefix) => isUnder(cwd, prefix))) {
    throw new GaggleError("PERMISSION_DENIED", `cwd "${cwd}" is refused by the policy rule cwd_allow: it is under none of ${list(policy.cwdAllow)}`, {
      hint: `pass a cwd under one of those directories, or add the directory to cwd_allow in ${policy.source}`,
    });
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
  const dirs = [...(policy.cwdAllow ?? []), ...(policy.redirectAllow ?? [])];
  const outside = line.redirects.find((redirect) => !redirectAllowed(redirect, cwd, dirs));
  if (outside !== undefined) {
    const where = dirs.length === 0 ? "only /dev/null is allowed (no cwd_allow or redirect_allow)" : `it is /dev/null or under none of ${list(dirs)}`;
    throw new GaggleError("PERMISSION_DENIED", `the redirection ${outside.op} ${JSON.stringify(outside.path)} is refused by the policy: ${where}`, {
      hint: `redirect into a directory under cwd_allow, or add one to redirect_allow in ${policy.source}`,
    });
  }
}

/** The file, resolved against `cwd` with its symlinks followed, is /dev/null or under one of `dirs`. */
function redirectAllowed(redirect: FileRedirect, cwd: string, dirs: string[]): boolean {
  const path = realTarget(resolve(cwd, redirect.path));
  if (path === undefined) return false;
  return path === "/dev/null" || dirs.some((dir) => isUnder(path, dir));
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
