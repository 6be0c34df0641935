// The process policy: its grammar, how it loads (never failing the config), and each refusal through a real gaggle.
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GaggleError } from "../../../src/shared/errors.js";
import { checkPolicy, matches, type Policy } from "../../../src/virtual/process/policy.js";
import { loadPolicy } from "../../../src/virtual/process/policy-load.js";
import { splitCommand } from "../../../src/virtual/process/shell-segments.js";
import { startGaggle } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { ended, processConfig, processFailure, run } from "./helpers.js";

describe("splitCommand", () => {
  it("splits on &&, ||, ;, |, & and newlines, outside quotes", () => {
    expect(splitCommand("npm ci && npm test || echo failed; git status | head -3\nls &  pwd")).toEqual({
      segments: ["npm ci", "npm test", "echo failed", "git status", "head -3", "ls", "pwd"],
    });
    expect(splitCommand(`echo 'a; b' "c && d" e\\;f`)).toEqual({ segments: [`echo 'a; b' "c && d" e\\;f`] });
  });

  it("keeps redirections whole and joins continued lines", () => {
    expect(splitCommand("make 2>&1 | tee log; cat <&3 >| out")).toEqual({ segments: ["make 2>&1", "tee log", "cat <&3 >| out"] });
    expect(splitCommand("npm \\\n  test")).toEqual({ segments: ["npm test"] });
  });

  it("names what it cannot check", () => {
    expect(splitCommand("echo $(id)")).toEqual({ unverifiable: "command substitution ($( ))" });
    expect(splitCommand('echo "$(id)"')).toEqual({ unverifiable: "command substitution ($( ))" });
    expect(splitCommand("echo `id`")).toEqual({ unverifiable: "backticks (`...`)" });
    expect(splitCommand("(cd x && rm y)")).toEqual({ unverifiable: "a subshell (( ))" });
    expect(splitCommand("diff <(ls a) <(ls b)")).toEqual({ unverifiable: "process substitution (<( ) or >( ))" });
    expect(splitCommand("echo 'open")).toEqual({ unverifiable: "an unterminated single quote" });
    // Quoted, they are only text.
    expect(splitCommand("echo '$(id) `id` (x)'")).toEqual({ segments: ["echo '$(id) `id` (x)'"] });
  });
});

describe("matches", () => {
  it("treats * as any run of characters and everything else literally", () => {
    expect(matches("npm *", "npm test")).toBe(true);
    expect(matches("npm *", "npm")).toBe(true);
    expect(matches("npm *", "npmx")).toBe(false);
    expect(matches("git status", "git  status".replace(/\s+/g, " "))).toBe(true);
    expect(matches("git status", "git status -s")).toBe(false);
    expect(matches("ls*", "ls -la")).toBe(true);
    expect(matches("echo a.b", "echo aXb")).toBe(false);
    expect(matches("*", "anything at all")).toBe(true);
  });
});

function refusal(policy: Policy, command: string, cwd = "/tmp"): string | undefined {
  try {
    checkPolicy(policy, command, cwd);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(GaggleError);
    expect((error as GaggleError).code).toBe("PERMISSION_DENIED");
    return (error as GaggleError).message;
  }
}

describe("checkPolicy", () => {
  const rules: Policy = { kind: "rules", source: "[virtual.process.policy]", allow: ["echo *", "true"], cwdAllow: ["/tmp"] };

  it("allows a command whose every segment matches", () => {
    expect(refusal(rules, "echo a && true; echo b | echo c")).toBeUndefined();
  });

  it("names the denied segment and the rule", () => {
    expect(refusal(rules, "echo a && rm -rf x")).toBe(
      'segment "rm -rf x" is refused by the policy rule allow ("echo *", "true"): no pattern matches it',
    );
  });

  it("refuses a cwd outside cwd_allow, by whole path components", () => {
    expect(refusal(rules, "true", "/tmp/sub")).toBeUndefined();
    expect(refusal(rules, "true", "/tmpfoo")).toContain("cwd_allow");
  });

  it('refuses $( ) unless allow is "*"', () => {
    expect(refusal(rules, "echo $(id)")).toContain("command substitution");
    expect(refusal({ ...rules, allow: "*" }, "echo $(id)")).toBeUndefined();
  });

  it("allows everything without a policy and nothing with a broken one", () => {
    expect(refusal({ kind: "open" }, "rm -rf $(pwd)", "/")).toBeUndefined();
    expect(refusal({ kind: "broken", source: "x", reason: "allow: expected ..." }, "true")).toContain("allow: expected ...");
  });
});

describe("loadPolicy", () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-policy-")));
  const configPath = join(dir, "children_config.toml");

  it("is open without a policy", () => {
    expect(loadPolicy({ policy: undefined, policyFile: undefined }, configPath)).toEqual({ kind: "open" });
  });

  it("resolves cwd_allow against the config file's folder", () => {
    const policy = loadPolicy({ policy: { allow: ["npm *"], cwd_allow: ["."] }, policyFile: undefined }, configPath);
    expect(policy).toMatchObject({ kind: "rules", allow: ["npm *"], cwdAllow: [dir] });
  });

  it("is broken, with the reason, when it does not validate", () => {
    expect(loadPolicy({ policy: { allow: 5 }, policyFile: undefined }, configPath)).toMatchObject({
      kind: "broken",
      reason: expect.stringContaining("virtual.process.policy.allow"),
    });
    expect(loadPolicy({ policy: { alow: ["x"] }, policyFile: undefined }, configPath)).toMatchObject({
      kind: "broken",
      reason: expect.stringContaining('did you mean "allow"'),
    });
    expect(loadPolicy({ policy: { cwd_allow: ["/tmp"] }, policyFile: undefined }, configPath)).toMatchObject({ kind: "broken" });
    expect(loadPolicy({ policy: { allow: [] }, policyFile: "p.toml" }, configPath)).toMatchObject({
      kind: "broken",
      reason: expect.stringContaining("keep one"),
    });
  });

  it("reads a TOML or JSON policy file, and is broken when the file is missing or bad", () => {
    writeFileSync(join(dir, "ok.json"), JSON.stringify({ allow: ["make *"] }));
    expect(loadPolicy({ policy: undefined, policyFile: "ok.json" }, configPath)).toMatchObject({ kind: "rules", allow: ["make *"] });
    writeFileSync(join(dir, "bad.toml"), 'allow = ["make *"\n');
    expect(loadPolicy({ policy: undefined, policyFile: "bad.toml" }, configPath)).toMatchObject({
      kind: "broken",
      reason: expect.stringContaining("TOML syntax error"),
    });
    expect(loadPolicy({ policy: undefined, policyFile: "missing.toml" }, configPath)).toMatchObject({
      kind: "broken",
      reason: expect.stringContaining("not found"),
    });
  });
});

describe("the policy in a running gaggle", () => {
  it("allows, denies a segment, denies a cwd and refuses $( )", async () => {
    const allowed = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-allowed-")));
    const config = processConfig(`[virtual.process.policy]\nallow = ["echo *", "true"]\ncwd_allow = [${JSON.stringify(allowed)}]\n`);
    const gaggle = await startGaggle(config.text);
    try {
      const ok = await run(gaggle.client, "echo hi && true", { cwd: allowed });
      expect((await ended(gaggle.client, ok.pid)).output).toBe("hi");

      const segment = await processFailure(gaggle.client, "gg_process_run", { command: "echo hi; rm -rf ./x", cwd: allowed });
      expect(segment).toMatchObject({ code: "PERMISSION_DENIED", error: expect.stringContaining('segment "rm -rf ./x"') });
      expect(segment.error).toContain("allow");

      const cwd = await processFailure(gaggle.client, "gg_process_run", { command: "true", cwd: "/" });
      expect(cwd).toMatchObject({ code: "PERMISSION_DENIED", error: expect.stringContaining("cwd_allow") });

      const substitution = await processFailure(gaggle.client, "gg_process_run", { command: "echo $(id)", cwd: allowed });
      expect(substitution).toMatchObject({ code: "PERMISSION_DENIED", error: expect.stringContaining("$( )") });
    } finally {
      await gaggle.close();
    }
  });

  it("with an invalid policy file, starts, says why at start-up, and refuses everything saying why", async () => {
    const config = processConfig(`[virtual.process]\npolicy_file = "/no/such/policy.toml"\n`);
    const gaggle = await startGaggle(config.text);
    try {
      const logged = await until(
        () => gaggle.stderr(),
        (text) => text.includes("process policy is invalid"),
      );
      expect(logged).toContain("/no/such/policy.toml");
      const refused = await processFailure(gaggle.client, "gg_process_run", { command: "true" });
      expect(refused.code).toBe("PERMISSION_DENIED");
      expect(refused.error).toContain("policy file /no/such/policy.toml not found");
      expect(refused.hint).toContain("restart gaggle");
    } finally {
      await gaggle.close();
    }
  });

  it("with an inline policy that does not validate, the config still loads and everything is refused", async () => {
    const gaggle = await startGaggle(processConfig(`[virtual.process.policy]\nallow = "everything"\n`).text);
    try {
      const refused = await processFailure(gaggle.client, "gg_process_run", { command: "true" });
      expect(refused).toMatchObject({ code: "PERMISSION_DENIED", error: expect.stringContaining("virtual.process.policy.allow") });
    } finally {
      await gaggle.close();
    }
  });
});
