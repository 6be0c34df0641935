// The process policy: its grammar, how it loads (never failing the config), and each refusal through a real gaggle.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { GaggleError } from "../../../src/shared/errors.js";
import { checkPolicy, matches, type Policy } from "../../../src/virtual/process/policy.js";
import { loadPolicy } from "../../../src/virtual/process/policy-load.js";
import { startGaggle } from "../../helpers/gaggle.js";
import { seeded } from "../../helpers/chaos.js";
import { until } from "../../helpers/poll.js";
import { ended, processConfig, processFailure, run } from "./helpers.js";

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

async function refusal(policy: Policy, command: string, cwd = "/tmp"): Promise<string | undefined> {
  try {
    await checkPolicy(policy, command, cwd);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(GaggleError);
    expect((error as GaggleError).code).toBe("PERMISSION_DENIED");
    return (error as GaggleError).message;
  }
}

describe("checkPolicy", async () => {
  const rules: Policy = { kind: "rules", source: "[virtual.process.policy]", allow: ["echo *", "true"], cwdAllow: ["/tmp"] };

  it("allows a command whose every segment matches", async () => {
    expect(await refusal(rules, "echo a && true; echo b | echo c")).toBeUndefined();
  });

  it("names the denied segment and the rule", async () => {
    expect(await refusal(rules, "echo a && rm -rf x")).toBe(
      'segment "rm -rf x" is refused by the policy rule allow ("echo *", "true"): no pattern matches it',
    );
  });

  it("refuses a cwd outside cwd_allow, by whole path components", async () => {
    expect(await refusal(rules, "true", "/tmp/sub")).toBeUndefined();
    expect(await refusal(rules, "true", "/tmpfoo")).toContain("cwd_allow");
  });

  it('refuses $( ) unless allow is "*"', async () => {
    expect(await refusal(rules, "echo $(id)")).toContain("command substitution");
    expect(await refusal({ ...rules, allow: "*" }, "echo $(id)")).toBeUndefined();
  });

  it("sees the command an escaped >&, >| or <& hides, and refuses it", async () => {
    for (const attack of ["echo \\>&touch X", "echo \\>|touch X", "echo \\<&touch X", "echo a\\>&touch X"]) {
      expect(await refusal(rules, attack)).toContain('segment "touch X" is refused');
    }
  });

  it("allows a redirection only to /dev/null or under cwd_allow and redirect_allow, symlinks followed", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-redirect-")));
    const logs = join(dir, "logs");
    mkdirSync(logs);
    symlinkSync("/etc", join(dir, "etc-link"));
    const scoped: Policy = { ...rules, cwdAllow: [dir], redirectAllow: ["/var/tmp/gaggle-logs"] };
    expect(await refusal(scoped, "echo hi > out.txt 2>&1", dir)).toBeUndefined();
    expect(await refusal(scoped, "echo hi >> logs/run.log 2>/dev/null", dir)).toBeUndefined();
    expect(await refusal(scoped, "echo hi > /var/tmp/gaggle-logs/x", dir)).toBeUndefined();
    expect(await refusal(scoped, "echo hi >> ../FILE", logs)).toBeUndefined(); // still under cwd_allow
    expect(await refusal(scoped, "echo hi >> ../FILE", dir)).toBe(
      `the redirection >> "../FILE" is refused by the policy: only /dev/null and files under ${JSON.stringify(dir)}, "/var/tmp/gaggle-logs" are allowed`,
    );
    expect(await refusal(scoped, "echo hi > etc-link/passwd", dir)).toContain('the redirection > "etc-link/passwd" is refused');
    expect(await refusal(scoped, "true < /etc/passwd", dir)).toContain("is refused by the policy");
    expect(await refusal({ ...rules, cwdAllow: undefined }, "echo hi > FILE")).toBe(
      'the redirection > "FILE" is refused by the policy: only /dev/null is allowed (no cwd_allow or redirect_allow)',
    );
    expect(await refusal({ ...rules, cwdAllow: undefined }, "echo hi > /dev/null 2>&1")).toBeUndefined();
  });

  it("judges what follows cd, pushd or popd from where the shell will be, and refuses a change out of cwd_allow", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-chdir-")));
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-chdir-outside-")));
    mkdirSync(join(dir, "sub"));
    symlinkSync(outside, join(dir, "out-link"));
    const withCd: Policy = { kind: "rules", source: "p", allow: ["echo *", "cd *", "pushd *", "popd", "true"], cwdAllow: [dir] };
    expect(await refusal(withCd, "cd sub && echo x > f", dir)).toBeUndefined();
    expect(await refusal(withCd, "cd ./sub && echo x > f; cd sub; echo y > g", dir)).toBeUndefined();
    // A cd may fail, so the next one may start from where the line started.
    expect(await refusal(withCd, "cd ./sub; cd .. && echo x > f", dir)).toContain('"cd .." may leave the shell in');
    expect(await refusal(withCd, `cd ${outside} && echo x > f`, dir)).toBe(
      `"cd ${outside}" may leave the shell in ${outside}, under none of the cwd_allow directories, which the policy refuses`,
    );
    expect(await refusal(withCd, `pushd ${outside} && echo x > f`, dir)).toContain(`"pushd ${outside}" may leave the shell in ${outside}`);
    expect(await refusal(withCd, "cd out-link && true", dir)).toContain(`may leave the shell in ${outside}`);
    expect(await refusal(withCd, "cd sub/../.. && echo x > f", dir)).toContain("may leave the shell in");
    expect(await refusal(withCd, `cd "$HOME" && echo x > f`, dir)).toContain("goes to a directory known only when it runs");
    expect(await refusal(withCd, "cd && true", dir)).toContain("known only when it runs");
    expect(await refusal(withCd, "popd; echo x > f", dir)).toContain("known only when it runs");
    // Without cwd_allow, a redirection after the change is judged from each folder the shell may be in.
    const redirectOnly: Policy = { ...withCd, cwdAllow: undefined, redirectAllow: [dir] };
    expect(await refusal(redirectOnly, `echo x > f; cd ${outside}; echo x > f`, dir)).toBe(
      `the redirection > "f" from ${outside}, where "cd ${outside}" may leave the shell, is refused by the policy: only /dev/null and files under ${JSON.stringify(dir)} are allowed`,
    );
    expect(await refusal(redirectOnly, `cd "$X" && echo x > f`, dir)).toContain("after a directory change to a place known only when it runs");
    expect(await refusal(redirectOnly, `cd "$X" && echo x > ${dir}/f 2>/dev/null`, dir)).toBeUndefined();
    // CDPATH would move where `cd sub` goes: a line that sets it is refused.
    for (const command of ["CDPATH=/ cd etc && echo x > f", "CDPATH=/; cd etc", "echo ${CDPATH:=/}", "read CDPATH"]) {
      expect({ command, refusal: await refusal({ ...withCd, allow: ["*CDPATH*", "cd *", "echo *", "read *"] }, command, dir) }).toEqual({
        command,
        refusal: expect.stringContaining("a change to CDPATH"),
      });
    }
  });

  it("follows && and || as bash does: what runs after a cd's success or failure is judged from where that leaves the shell", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-flow-")));
    const parent = dirname(dir);
    mkdirSync(join(dir, "sub"));
    const flow: Policy = { kind: "rules", source: "p", allow: ["cd *", "make", "true", "echo *"], cwdAllow: [dir] };
    // After a cd that may fail or be skipped, the refusal says the shell may still be where the line started.
    const left = `"cd .." may leave the shell in ${parent} (from ${dir}, where the shell still is if a directory change before it fails or is skipped), under none of the cwd_allow directories, which the policy refuses`;
    // `cd ..` runs only if `cd sub` (and make) succeeded, so only from sub.
    expect(await refusal(flow, "cd sub && cd ..", dir)).toBeUndefined();
    expect(await refusal(flow, "cd sub && make && cd ..", dir)).toBeUndefined();
    expect(await refusal(flow, "cd sub && cd .. && cd sub && cd ..", dir)).toBeUndefined();
    // Only if it failed, so from where the line started; `;` runs it either way, as does `||` after a command that may fail.
    expect(await refusal(flow, "cd sub || cd ..", dir)).toBe(left);
    expect(await refusal(flow, "cd sub; cd ..", dir)).toBe(left);
    expect(await refusal(flow, "cd sub || true; cd ..", dir)).toBe(left);
    await expect(checkPolicy(flow, "cd sub; cd ..", dir)).rejects.toMatchObject({
      hint: expect.stringContaining("joined with && to what must run there"),
    });
    expect(await refusal(flow, "cd sub && make || cd ..", dir)).toBe(left);
    expect(await refusal(flow, "true; cd ..", dir)).toBe(
      `"cd .." may leave the shell in ${parent}, under none of the cwd_allow directories, which the policy refuses`,
    );
    expect(await refusal(flow, "! cd sub && cd ..", dir)).toBe(left);
    expect(await refusal(flow, "cd sub & cd ..", dir)).toBe(left);
    // A pipeline's commands run in subshells: a cd in one is never trusted to have moved the shell.
    expect(await refusal(flow, "cd sub | true && cd ..", dir)).toBe(left);
    // A folder that does not exist yet is where its cd would leave the shell if it is made before it runs.
    expect(await refusal(flow, "cd nonexistent && cd ..", dir)).toBeUndefined();
    expect(await refusal(flow, "cd nonexistent && cd ../..", dir)).toBe(
      `"cd ../.." may leave the shell in ${parent} (from ${dir}/nonexistent, where "cd nonexistent" may leave it), under none of the cwd_allow directories, which the policy refuses`,
    );
    // A redirection is opened from where its own command runs.
    expect(await refusal(flow, "cd sub && echo x > ../f", dir)).toBeUndefined();
    expect(await refusal(flow, "cd sub || echo x > ../f", dir)).toContain('the redirection > "../f" is refused');
  });

  it("never allows a line that takes the shell out of cwd_allow in bash itself, for generated lines of cd, true and false", async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-flow-oracle-")));
    const top = join(root, "top");
    mkdirSync(join(top, "a", "b"), { recursive: true });
    const flow: Policy = { kind: "rules", source: "p", allow: ["cd *", "true", "false"], cwdAllow: [top] };
    const commands = ["cd a", "cd b", "cd ..", "cd a/b", "cd ../..", "cd missing", "cd -P ..", "true", "false"];
    const joints = [" && ", " || ", "; ", " | ", " & ", "\n"];
    const random = seeded(20261128);
    const log = join(root, "pwd.log");
    const escapes: string[] = [];
    const seen = { allowed: 0, refusedAndLeft: 0 };
    for (let n = 0; n < 160; n++) {
      const start = n % 2 === 0 ? top : join(top, "a");
      const words = Array.from({ length: 2 + random.int(4) }, () => (random.chance(0.15) ? "! " : "") + random.pick(commands));
      const line = words.map((word, at) => (at === 0 ? word : random.pick(joints) + word)).join("");
      const allowed = (await refusal(flow, line, start)) === undefined;
      // Every folder the shell (or a subshell of it) is in before each command, and at the end.
      writeFileSync(log, "");
      spawnSync("bash", ["-c", `set -T; trap 'echo "$PWD" >> ${log}' DEBUG\n${line}\nwait; echo "$PWD" >> ${log}`], { cwd: start, stdio: "ignore" });
      const left = readFileSync(log, "utf8")
        .split("\n")
        .find((place) => place !== "" && place !== top && !place.startsWith(`${top}/`));
      if (allowed) seen.allowed++;
      if (allowed && left !== undefined) escapes.push(`${JSON.stringify(line)} from ${start} reached ${left}`);
      if (!allowed && left !== undefined) seen.refusedAndLeft++;
    }
    expect(escapes).toEqual([]);
    // Neither side is empty: the lines test both what is allowed and what bash shows leaving.
    expect(seen.allowed).toBeGreaterThan(0);
    expect(seen.refusedAndLeft).toBeGreaterThan(0);
  });

  it("opens a redirection's path as the kernel does: a symlink's .. is the parent of its target", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-dotdot-")));
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-dotdot-outside-")));
    mkdirSync(join(outside, "deep"));
    symlinkSync(join(outside, "deep"), join(dir, "deep-link"));
    const scoped: Policy = { kind: "rules", source: "p", allow: ["echo *"], cwdAllow: [dir] };
    // Textually deep-link/../x is dir/x; bash opens outside/x.
    expect(await refusal(scoped, "echo x > deep-link/../x", dir)).toContain('the redirection > "deep-link/../x" is refused');
    expect(await refusal(scoped, "echo x > deep-link/x", dir)).toContain('the redirection > "deep-link/x" is refused');
  });

  it("allows everything without a policy and nothing with a broken one", async () => {
    expect(await refusal({ kind: "open" }, "rm -rf $(pwd)", "/")).toBeUndefined();
    expect(await refusal({ kind: "broken", source: "x", reason: "allow: expected ..." }, "true")).toContain("allow: expected ...");
  });
});

describe("loadPolicy", () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-policy-")));
  const configPath = join(dir, "children_config.toml");

  it("is open without a policy", () => {
    expect(loadPolicy({ policy: undefined, policyFile: undefined }, configPath)).toEqual({ kind: "open" });
  });

  it("resolves cwd_allow and redirect_allow against the config file's folder", () => {
    const policy = loadPolicy({ policy: { allow: ["npm *"], cwd_allow: ["."], redirect_allow: ["logs"] }, policyFile: undefined }, configPath);
    expect(policy).toMatchObject({ kind: "rules", allow: ["npm *"], cwdAllow: [dir], redirectAllow: [join(dir, "logs")] });
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
  it("allows, denies a segment, a cwd, a hidden command and a redirection, and refuses $( )", async () => {
    const allowed = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-allowed-")));
    const config = processConfig(
      `[virtual.process.policy]\nallow = ["echo *", "true", "cd *", "pushd *", "printf *", "read *"]\ncwd_allow = [${JSON.stringify(allowed)}]\n`,
    );
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

      const hidden = await processFailure(gaggle.client, "gg_process_run", { command: "echo \\>&touch X", cwd: allowed });
      expect(hidden).toMatchObject({ code: "PERMISSION_DENIED", error: expect.stringContaining('segment "touch X"') });
      // A variable's value made code by the expansion that reads it: `$_` is the last word of the command before.
      for (const command of [
        "echo '$(touch X)'; echo ${_@P}",
        "echo 'a[$(touch X)]'; echo ${!_}",
        "echo 'a[$(touch X)]'; echo ${PATH:_:1}",
        "echo 'a[$(touch X)]'; echo ${PATH:1:_}",
        "echo 'a[$(touch X)]'; printf -v \"$_\" x",
        "echo 'a[$(touch X)]'; read \"$_\" < /dev/null",
      ]) {
        const code = await processFailure(gaggle.client, "gg_process_run", { command, cwd: allowed });
        expect({ command, ...code }).toMatchObject({
          command,
          code: "PERMISSION_DENIED",
          error: expect.stringContaining("which the policy cannot check"),
        });
      }
      const moved = await processFailure(gaggle.client, "gg_process_run", { command: "cd /tmp && echo hi > gaggle-policy-escape", cwd: allowed });
      expect(moved).toMatchObject({ code: "PERMISSION_DENIED", error: expect.stringContaining('"cd /tmp" may leave the shell in /tmp') });
      const pushed = await processFailure(gaggle.client, "gg_process_run", { command: "pushd /tmp && echo hi > gaggle-policy-escape", cwd: allowed });
      expect(pushed).toMatchObject({ code: "PERMISSION_DENIED", error: expect.stringContaining('"pushd /tmp" may leave the shell in /tmp') });
      const written = await processFailure(gaggle.client, "gg_process_run", { command: "echo hi > /tmp/gaggle-policy-escape", cwd: allowed });
      expect(written).toMatchObject({ code: "PERMISSION_DENIED", error: expect.stringContaining("redirection") });
      expect(readdirSync(allowed)).toEqual([]);
    } finally {
      await gaggle.close();
    }
  });

  it("runs what follows a cd's success from where it leaves the shell, and refuses what may run after its failure", async () => {
    const allowed = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-flow-run-")));
    mkdirSync(join(allowed, "sub"));
    const config = processConfig(`[virtual.process.policy]\nallow = ["cd *", "pwd"]\ncwd_allow = [${JSON.stringify(allowed)}]\n`);
    const gaggle = await startGaggle(config.text);
    try {
      const moved = await run(gaggle.client, "cd sub && pwd && cd .. && pwd", { cwd: allowed });
      expect((await ended(gaggle.client, moved.pid)).output).toBe(`${allowed}/sub\n${allowed}`);
      const refused = await processFailure(gaggle.client, "gg_process_run", { command: "cd sub || cd .. && pwd", cwd: allowed });
      expect(refused).toMatchObject({
        code: "PERMISSION_DENIED",
        error: expect.stringContaining(`"cd .." may leave the shell in ${dirname(allowed)}`),
      });
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
