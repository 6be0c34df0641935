// Turns `[virtual.process] policy` / `policy_file` (or another built-in child's) into a Policy; anything wrong becomes a broken policy, never a thrown error.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { ConfigError, describeValue, fallbackErrorMap, formatIssues, formatPath, issuesFromZod } from "../../config/errors.js";
import { errorMessage } from "../../shared/errors.js";
import type { Logger } from "../../shared/log.js";
import { canonical } from "../../shared/fs-checks.js";
import { parseDocument } from "../../config/parse.js";
import { expandHome } from "../../config/paths.js";
import { closed, directoryPaths } from "../../config/zod-kit.js";
import type { Policy } from "./policy.js";
import type { ProcessSettings } from "../../config/virtual/process.js";

/** "*" or patterns; a message of its own, since a missing allow must say what to write. */
const allowSchema = z.unknown().transform((value, ctx): "*" | string[] => {
  if (value === "*") return "*";
  if (Array.isArray(value) && value.every((item) => typeof item === "string" && item.trim() !== "")) {
    return value.map((item: string) => item.trim());
  }
  const message = `expected "*" (every command) or an array of non-empty command patterns ([] allows none), got ${describeValue(value)}`;
  ctx.addIssue({ code: "custom", message, input: value });
  return z.NEVER;
});

const policySchema = closed({
  allow: allowSchema,
  cwd_allow: directoryPaths().optional(),
  redirect_allow: directoryPaths().optional(),
});

/**
 * `configPath` is the config file's absolute path: relative paths are taken from its folder. `table` is the
 * settings' table, which refusals name (["virtual", "process"], ["virtual", "workspace"]).
 */
export function loadPolicy(
  settings: Pick<ProcessSettings, "policy" | "policyFile">,
  configPath: string,
  table: readonly string[] = ["virtual", "process"],
): Policy {
  const { policy, policyFile } = settings;
  const inline = `[${formatPath([...table, "policy"])}]`;
  if (policy !== undefined && policyFile !== undefined) {
    return broken(inline, "both policy and policy_file are set; keep one");
  }
  if (policyFile !== undefined) return fromFile(policyFile, dirname(configPath), table);
  if (policy !== undefined) return validate(policy, inline, [...table, "policy"], dirname(configPath));
  return { kind: "open" };
}

function fromFile(value: unknown, base: string, table: readonly string[]): Policy {
  if (typeof value !== "string" || value === "") {
    return broken(`[${formatPath(table)}] policy_file`, `policy_file must be a file path, got ${JSON.stringify(value)}`);
  }
  const file = resolve(base, expandHome(value, homedir()));
  const source = `the policy file ${file}`;
  let text: string;
  try {
    // eslint-disable-next-line no-restricted-syntax -- synchronous: read as the process child is made (start-up or a reload), before it answers any call.
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return broken(source, code === "ENOENT" ? `policy file ${file} not found` : `cannot read policy file ${file} (${code ?? errorMessage(error)})`);
  }
  try {
    return validate(parseDocument(text, file).doc, source, [], dirname(file), file);
  } catch (error) {
    return broken(source, error instanceof ConfigError ? error.message : errorMessage(error));
  }
}

/** `keyPath`: where the policy is in the document its issues are named in. */
function validate(doc: unknown, source: string, keyPath: readonly string[], base: string, file = ""): Policy {
  const result = policySchema.safeParse(doc, { error: fallbackErrorMap });
  if (!result.success) {
    const issues = issuesFromZod(result.error.issues, keyPath);
    return broken(source, formatIssues(file, issues).replace(/\n/g, "; "));
  }
  const { allow, cwd_allow, redirect_allow } = result.data;
  const absolute = (dirs: string[] | undefined) => dirs?.map((dir) => canonical(resolve(base, expandHome(dir, homedir()))));
  return {
    kind: "rules",
    source,
    allow: allow === "*" || allow.includes("*") ? "*" : allow,
    cwdAllow: absolute(cwd_allow),
    redirectAllow: absolute(redirect_allow),
  };
}

/** What `gaggle validate` reports of the `child`'s policy: one so broken that every command would be refused. */
export function policyProblems(policy: Policy, child: string): string[] {
  return policy.kind === "broken" ? [`${policy.source}: the ${child} policy is invalid, so every command would be refused: ${policy.reason}`] : [];
}

/** A broken policy is said at start-up, not only when the first command is refused; `commands` names what it refuses. */
export function logBrokenPolicy(policy: Policy, child: string, log: Logger, commands = "command"): void {
  if (policy.kind === "broken")
    log.error({ source: policy.source }, `${child} policy is invalid, so every ${commands} will be refused: ${policy.reason}`);
}

function broken(source: string, reason: string): Policy {
  return { kind: "broken", source, reason };
}
