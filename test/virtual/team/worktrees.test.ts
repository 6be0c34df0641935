// Members in git worktrees: a new branch and checkout, its init script, rollback when that fails, reuse, removal.
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { failureOf, textOf } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { branches, makeRepo, promptOf, startTeamGaggle, worktreeList, type TeamGaggle } from "./helpers.js";

let team: TeamGaggle | undefined;
afterEach(async () => {
  await team?.close();
  team = undefined;
});

const SCRIPT = ".agents/gg/worktree-init.sh";

/** A gaggle in a fresh repository whose worktrees go to <dir>/worktrees. */
async function inRepo(files: Record<string, string>, extra = ""): Promise<TeamGaggle> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
  makeRepo(dir, files);
  return startTeamGaggle({ dir, team: `worktrees_dir = ${JSON.stringify(join(dir, "worktrees"))}\n${extra}` });
}

describe("worktree_name", () => {
  it("adds a branch and worktree (name lower-cased), runs the init script in it, and runs the member there", async () => {
    team = await inRepo({ [SCRIPT]: '#!/bin/sh\necho "init in $(pwd) for $GG_WORKTREE_NAME of $GG_TEAM_ID"\necho run >> .init-runs\n' });
    const path = join(team.dir, "worktrees", "feature-x");
    const added = await team.json<Record<string, unknown>>("gg_team_manage", { team_id: "t1", title: "Builder", worktree_name: " Feature-X " });
    expect(added).toMatchObject({
      cwd: path,
      worktree: {
        name: "feature-x",
        path,
        branch: "feature-x",
        created: true,
        init_script: "ran",
        init_output: `init in ${path} for feature-x of t1`,
      },
    });
    expect(branches(team.dir)).toEqual(["feature-x", "main"]);
    expect(worktreeList(team.dir)).toEqual([team.dir, path]);
    expect(readFileSync(join(path, ".init-runs"), "utf8")).toBe("run\n");
    await until(
      () => team!.runs().length,
      (count) => count === 1,
    );
    expect(team.runs()[0]!.cwd).toBe(path);
    expect(promptOf(team.runs()[0]!)).toContain(`You work in the git worktree ${path} on branch feature-x; commit your work there.`);
    const row = await team.member("t1", added.agent_id as string);
    expect(row).toMatchObject({ worktree_path: path, worktree_name: "feature-x", title: "Builder" });
  });

  it("keeps gaggle's own secret from git's hooks and from the init script", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
    makeRepo(dir, { [SCRIPT]: '#!/bin/sh\necho "init sees ${GAGGLE_AUTH_TOKEN:-no token}"\n' });
    const hook = join(dir, ".git", "hooks", "post-checkout");
    writeFileSync(hook, `#!/bin/sh\necho "hook sees \${GAGGLE_AUTH_TOKEN:-no token}" > ${JSON.stringify(join(dir, "hook-saw"))}\n`);
    chmodSync(hook, 0o755);
    team = await startTeamGaggle({ dir, team: `worktrees_dir = ${JSON.stringify(join(dir, "worktrees"))}`, env: { GAGGLE_AUTH_TOKEN: "s3cret" } });
    const added = await team.json<{ worktree: { init_output: string } }>("gg_team_manage", {
      team_id: "t1",
      title: "Builder",
      worktree_name: "hooked",
    });
    expect(added.worktree.init_output).toBe("init sees no token");
    expect(readFileSync(join(dir, "hook-saw"), "utf8")).toBe("hook sees no token\n");
  });

  it("rolls back when the init script fails: no worktree, no branch, no member, and the script's output in the error", async () => {
    team = await inRepo({ [SCRIPT]: '#!/bin/sh\necho "installing dependencies"\necho "npm ERR! no network" >&2\nexit 3\n' });
    const path = join(team.dir, "worktrees", "broken");
    const failure = await team.failure("gg_team_manage", { team_id: "t1", worktree_name: "broken", prompt: "never sent" });
    expect(failure.code).toBe("SERVER_FAILED");
    expect(failure.error).toMatch(
      new RegExp(
        `^\\./\\.agents/gg/worktree-init\\.sh failed with exit code 3 in the new worktree ${path}; the worktree and branch "broken" were removed again\\. Its output:\\n`,
      ),
    );
    expect(failure.error).toContain("installing dependencies");
    expect(failure.error).toContain("npm ERR! no network");
    expect(existsSync(path)).toBe(false);
    expect(branches(team.dir)).toEqual(["main"]);
    expect(worktreeList(team.dir)).toEqual([team.dir]);
    expect(await team.failure("gg_team_status", { team_id: "t1" })).toMatchObject({ code: "NOT_FOUND" });
    expect(team.runs()).toEqual([]);
  });

  /**
   * Two first adds to one new team at once: "first" creates the team, and its init script fails once "second" has
   * joined the team; "second"'s script (its worktree is made after "first"'s) ends with `secondExit` once "first"'s
   * add is undone. Returns both answers.
   */
  async function racingAdds(secondExit: number): Promise<[CallToolResult, CallToolResult]> {
    const marks = mkdtempSync(join(tmpdir(), "gaggle-marks-"));
    const waitFor = (file: string) => `n=0; until [ -e "${join(marks, file)}" ]; do n=$((n+1)); [ $n -gt 600 ] && exit 9; sleep 0.05; done`;
    const script = [
      "#!/bin/sh",
      `touch "${marks}/$GG_WORKTREE_NAME"`,
      'case "$GG_WORKTREE_NAME" in',
      `  first) ${waitFor("go-first")}; exit 1 ;;`,
      `  second) ${waitFor("go-second")}; exit ${secondExit} ;;`,
      "esac",
    ].join("\n");
    team = await inRepo({ [SCRIPT]: `${script}\n` });
    const members = async () => (await team!.status("t1")).members.length;
    const first = team.call("gg_team_manage", { team_id: "t1", worktree_name: "first", prompt: "[answer one]" });
    await until(() => existsSync(join(marks, "first")), Boolean);
    const second = team.call("gg_team_manage", { team_id: "t1", worktree_name: "second", prompt: "[answer two]" });
    await until(members, (count) => count === 2);
    writeFileSync(join(marks, "go-first"), "");
    await until(members, (count) => count === 1);
    writeFileSync(join(marks, "go-second"), "");
    return Promise.all([first, second]);
  }

  it("drops a new team whose concurrent first adds all fail, and the next add creates it afresh", async () => {
    const [first, second] = await racingAdds(2);
    expect(failureOf(first).error).toContain("failed with exit code 1");
    expect(failureOf(second).error).toContain("failed with exit code 2");
    expect(await team!.failure("gg_team_status", { team_id: "t1" })).toMatchObject({ code: "NOT_FOUND" });
    const again = await team!.json<{ team_created: boolean }>("gg_team_manage", { team_id: "t1", title: "third" });
    expect(again.team_created).toBe(true);
  });

  it("keeps a new team whose creating add failed while a concurrent add to it started its member", async () => {
    const [first, second] = await racingAdds(0);
    expect(failureOf(first).error).toContain("failed with exit code 1");
    const added = JSON.parse(textOf(second)) as { agent_id: string; team_created: boolean };
    expect(added.team_created).toBe(true);
    const status = await team!.status("t1");
    expect(status.members.map((row) => row.agent_id)).toEqual([added.agent_id]);
  });

  it("use_existing_worktree reuses a worktree without running the script; a name already taken or not there is refused", async () => {
    team = await inRepo({ [SCRIPT]: "#!/bin/sh\necho run >> .init-runs\n" });
    const path = join(team.dir, "worktrees", "shared");
    const first = await team.add("t1", { title: "First", worktree_name: "shared" });
    const again = await team.failure("gg_team_manage", { team_id: "t1", worktree_name: "shared" });
    expect(again).toMatchObject({
      code: "INVALID_ARGS",
      hint: 'use_existing_worktree = true reuses an existing worktree "shared"; or pick another worktree_name',
    });
    expect(again.error).toMatch(/^git worktree add -b shared .* failed: fatal: a branch named 'shared' already exists/);
    const second = await team.json<Record<string, unknown>>("gg_team_manage", {
      team_id: "t1",
      title: "Second",
      worktree_name: "SHARED",
      use_existing_worktree: true,
    });
    expect(second).toMatchObject({
      cwd: path,
      worktree: { name: "shared", path, branch: "shared", created: false, init_script: "not run (existing worktree)", init_output: null },
    });
    expect(readFileSync(join(path, ".init-runs"), "utf8")).toBe("run\n");
    expect(await team.failure("gg_team_manage", { team_id: "t1", worktree_name: "ghost", use_existing_worktree: true })).toMatchObject({
      code: "NOT_FOUND",
      error: `no existing worktree "ghost" at ${join(team.dir, "worktrees", "ghost")}`,
      hint: "existing worktrees there: shared",
    });
    await until(
      () => team!.runs().length,
      (count) => count === 2,
    );
    expect(team.runs().map((run) => run.cwd)).toEqual([path, path]);
    // Removing a member leaves its worktree and branch in place, and says so.
    const removed = await team.json<{ results: Array<Record<string, unknown>> }>("gg_team_manage", { team_id: "t1", remove_agent_ids: [first] });
    expect(removed.results[0]).toMatchObject({
      ok: true,
      worktree_left: path,
      note: `${first} was removed; its worktree ${path} (branch shared) was left in place.`,
    });
    expect(existsSync(path)).toBe(true);
    expect(branches(team.dir)).toContain("shared");
  });

  it("without worktrees_dir, uses <state dir>/team/worktrees/<repository folder>; without a repository, says so", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
    makeRepo(dir);
    team = await startTeamGaggle({ dir });
    const added = await team.json<{ worktree: { path: string; init_script: string } }>("gg_team_manage", { team_id: "t1", worktree_name: "plain" });
    expect(added.worktree).toMatchObject({ path: join(dir, "state", "team", "worktrees", basename(dir), "plain"), init_script: "none" });
    await team.close();
    team = await startTeamGaggle();
    expect(await team.failure("gg_team_manage", { team_id: "t1", worktree_name: "x" })).toMatchObject({
      code: "INVALID_ARGS",
      error: `worktree_name needs a git repository, and ${team.dir} (the goose child's cwd) is not in one`,
    });
  });
});
