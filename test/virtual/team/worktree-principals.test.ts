// Worktree names are each principal's own: over HTTP with a token per person, two people's worktrees of one name are
// two branches and two folders, and neither person's names get in the way of the other's.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bearer, startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { textOf } from "../../helpers/gaggle.js";
import { failureOf } from "../goose/helpers.js";
import { branches, makeRepo, startTeamGaggle, teamConfig, worktreeList, type TeamGaggle } from "./helpers.js";

const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

let gaggle: HttpGaggle;
let dir: string;
let worktrees: string;
let ann: Client;
let bob: Client;

const manage = (client: Client, args: Record<string, unknown>) =>
  client.callTool({
    name: "execute_child_tool",
    arguments: { server_id: "team", tool_name: "gg_team_manage", arguments: args },
  }) as Promise<CallToolResult>;
const added = async (client: Client, args: Record<string, unknown>) => {
  const answer = await manage(client, args);
  if (answer.isError) throw new Error(textOf(answer));
  return JSON.parse(textOf(answer)) as { agent_id: string; cwd: string; worktree: { name: string; path: string; branch: string; created: boolean } };
};

/** A worktree ann's member got before worktree names were each principal's own: straight in the worktrees folder. */
function legacyWorktree(dir: string, worktrees: string): string {
  const path = join(worktrees, "legacy");
  execFileSync("git", ["worktree", "add", "-q", "-b", "legacy", path], { cwd: dir });
  const at = new Date().toISOString();
  const team = {
    team_id: "old",
    owner: "ann",
    lead_agent_id: "lead",
    created_at: at,
    members: [
      {
        agent_id: "agent-0ld0ld00",
        title: "Old",
        added_by: "lead",
        added_at: at,
        removed_at: at,
        agent: null,
        cwd: path,
        worktree: { name: "legacy", path, branch: "legacy", created: true },
        model_preset: null,
        options: [],
        session: null,
        gosling_id: null,
        agent_session_id: null,
        compaction_notices: true,
        tokens: null,
        last_activity_at: at,
      },
    ],
    messages: [],
    deliveries: [],
  };
  mkdirSync(join(dir, "state", "team", "teams", "ann"), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "state", "team", "teams", "ann", "old.json"), JSON.stringify(team), { mode: 0o600 });
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
  makeRepo(dir);
  worktrees = join(dir, "worktrees");
  legacyWorktree(dir, worktrees);
  // The local user's own branch named like a principal: a named principal's branches are never under it.
  execFileSync("git", ["branch", "ann"], { cwd: dir });
  const gateway = 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }';
  const team = `worktrees_dir = ${JSON.stringify(worktrees)}`;
  gaggle = await startHttpGaggle(teamConfig(dir, team, "", gateway), { env: { ...TOKENS, XDG_STATE_HOME: join(dir, "xdg-state") } });
  ann = await gaggle.connect({ name: "ann", ...bearer(TOKENS.GAGGLE_TEST_ANN) });
  bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
});
afterAll(() => gaggle?.stop());

describe("worktree_name over HTTP with a token per person", () => {
  it("gives each person their own branch and folder of one name", async () => {
    const annPath = join(worktrees, "@ann", "feature");
    const bobPath = join(worktrees, "@bob", "feature");
    const annAdded = await added(ann, { team_id: "t1", worktree_name: "feature" });
    expect(annAdded).toMatchObject({ cwd: annPath, worktree: { name: "feature", path: annPath, branch: "@ann/feature", created: true } });
    const bobAdded = await added(bob, { team_id: "t1", worktree_name: "feature" });
    expect(bobAdded).toMatchObject({ cwd: bobPath, worktree: { name: "feature", path: bobPath, branch: "@bob/feature", created: true } });
    expect(branches(dir).sort()).toEqual(["@ann/feature", "@bob/feature", "ann", "legacy", "main"]);
    expect(worktreeList(dir)).toEqual(expect.arrayContaining([annPath, bobPath]));
  });

  it("refuses a name only when it is the caller's own, and reuses only the caller's own", async () => {
    await added(ann, { team_id: "t2", worktree_name: "only-ann" });
    const again = failureOf(await manage(ann, { team_id: "t2", worktree_name: "only-ann" }));
    expect(again).toMatchObject({ code: "INVALID_ARGS", hint: expect.stringContaining('reuses an existing worktree "only-ann"') });
    expect(again.error).toContain("a branch named '@ann/only-ann' already exists");
    const reused = await added(ann, { team_id: "t2", worktree_name: "only-ann", use_existing_worktree: true });
    expect(reused.worktree).toMatchObject({ path: join(worktrees, "@ann", "only-ann"), branch: "@ann/only-ann", created: false });

    const refused = failureOf(await manage(bob, { team_id: "t2", worktree_name: "only-ann", use_existing_worktree: true }));
    expect(refused).toMatchObject({
      code: "NOT_FOUND",
      error: `no existing worktree "only-ann" at ${join(worktrees, "@bob", "only-ann")}`,
      hint: "existing worktrees there: feature",
    });
    expect(JSON.stringify(refused)).not.toContain("@ann");
  });

  it("lets the owner of a worktree made before names were each principal's own reuse it, and no one else", async () => {
    const path = join(worktrees, "legacy");
    const reused = await added(ann, { team_id: "t3", worktree_name: "legacy", use_existing_worktree: true });
    expect(reused).toMatchObject({ cwd: path, worktree: { name: "legacy", path, branch: "legacy", created: false } });
    expect(failureOf(await manage(bob, { team_id: "t3", worktree_name: "legacy", use_existing_worktree: true }))).toMatchObject({
      code: "NOT_FOUND",
      error: `no existing worktree "legacy" at ${join(worktrees, "@bob", "legacy")}`,
    });
  });
});

describe("the local principal's worktree_name that a named principal's member was given straight in the worktrees folder", () => {
  let local: TeamGaggle | undefined;
  afterEach(async () => {
    await local?.close();
    local = undefined;
  });

  it("is refused, saying what is there and what to do, and is neither made nor reused", async () => {
    const home = mkdtempSync(join(tmpdir(), "gaggle-team-"));
    makeRepo(home);
    const folder = join(home, "worktrees");
    const path = legacyWorktree(home, folder);
    local = await startTeamGaggle({ dir: home, team: `worktrees_dir = ${JSON.stringify(folder)}` });
    const expected = {
      code: "INVALID_ARGS",
      error: `worktree_name "legacy" is taken: ${path} (branch legacy) is the worktree a member of another principal's team was given, and it stays theirs`,
      hint: "pick another worktree_name; the name is free again once that worktree and its branch are removed (git worktree remove, git branch -D)",
    };
    expect(await local.failure("gg_team_manage", { team_id: "t1", worktree_name: "legacy" })).toMatchObject(expected);
    expect(await local.failure("gg_team_manage", { team_id: "t1", worktree_name: "legacy", use_existing_worktree: true })).toMatchObject(expected);
    expect(await local.failure("gg_team_status", { team_id: "t1" })).toMatchObject({ code: "NOT_FOUND" });
    expect(branches(home).sort()).toEqual(["legacy", "main"]);
    // A name nobody else was given is the local principal's, straight in the worktrees folder.
    const added = await local.json<{ worktree: { path: string; branch: string } }>("gg_team_manage", { team_id: "t1", worktree_name: "fresh" });
    expect(added.worktree).toMatchObject({ path: join(folder, "fresh"), branch: "fresh" });
  });
});
