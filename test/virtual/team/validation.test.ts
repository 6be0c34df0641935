// gg_team_manage and gg_team_message refuse bad arguments as goldengoose does, before anything starts.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { PNG, promptOf, startTeamGaggle, teamConfig, type TeamGaggle } from "./helpers.js";

let team: TeamGaggle | undefined;
afterEach(async () => {
  await team?.close();
  team = undefined;
});

const PRESETS =
  '[virtual.team.model_presets.fast]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n\n[virtual.team.model_presets.smart]\nprovider = "anthropic"\nmodel = "claude-sonnet-4"\n';

describe("gg_team_manage", () => {
  it("refuses each add-only field in remove mode by name, an empty list, and an invalid team_id", async () => {
    team = await startTeamGaggle();
    const fields: Record<string, unknown> = {
      title: "x",
      prompt: "x",
      image_paths: ["a.png"],
      model_preset: "fast",
      worktree_name: "w",
      use_existing_worktree: false,
      unsubscribe_from_compaction_notifications: true,
    };
    for (const [field, value] of Object.entries(fields)) {
      const failure = await team.failure("gg_team_manage", { team_id: "t1", remove_agent_ids: ["agent-1"], [field]: value });
      expect(failure).toMatchObject({ code: "INVALID_ARGS", error: `${field} cannot be provided when remove_agent_ids is provided` });
    }
    expect(
      await team.failure("gg_team_manage", { team_id: "t1", remove_agent_ids: ["a"], title: "x", model_preset: "y", prompt: "z" }),
    ).toMatchObject({
      error: "title, prompt and model_preset cannot be provided when remove_agent_ids is provided",
    });
    expect(await team.failure("gg_team_manage", { team_id: "t1", remove_agent_ids: [] })).toMatchObject({
      code: "INVALID_ARGS",
      error: "remove_agent_ids must contain at least one agent id",
    });
    expect(await team.failure("gg_team_manage", { team_id: "../etc", title: "x" })).toMatchObject({
      code: "INVALID_ARGS",
      error: expect.stringContaining('team_id "../etc" is not valid'),
    });
    expect(await team.failure("gg_team_manage", { team_id: "t1", remove_agent_ids: ["agent-1"] })).toMatchObject({
      code: "NOT_FOUND",
      error: 'no team "t1"',
    });
    expect(team.runs()).toEqual([]);
  });

  it("needs worktree_name for use_existing_worktree, and worktree names that match [a-z0-9][a-z0-9-_]* once lower-cased", async () => {
    team = await startTeamGaggle();
    for (const args of [{ use_existing_worktree: true }, { use_existing_worktree: true, worktree_name: "   " }]) {
      expect(await team.failure("gg_team_manage", { team_id: "t1", ...args })).toMatchObject({
        code: "INVALID_ARGS",
        error: "worktree_name is required when use_existing_worktree is true",
      });
    }
    for (const name of ["-lead", "_x", "a b", "a/b", "..", "ümlaut", "x".repeat(65)]) {
      const failure = await team.failure("gg_team_manage", { team_id: "t1", worktree_name: name });
      expect(failure.code).toBe("INVALID_ARGS");
      expect(failure.error).toBe(`worktree_name "${name}" is not valid: lower-cased it must match [a-z0-9][a-z0-9-_]* (at most 64 characters)`);
    }
    expect(team.runs()).toEqual([]);
  });

  it("refuses an unknown model_preset with the list of presets", async () => {
    team = await startTeamGaggle({ team: PRESETS });
    expect(await team.failure("gg_team_manage", { team_id: "t1", model_preset: "huge" })).toMatchObject({
      code: "INVALID_ARGS",
      error: 'Unknown model_preset "huge". Available presets: fast, smart',
    });
    await team.close();
    team = await startTeamGaggle();
    expect(await team.failure("gg_team_manage", { team_id: "t1", model_preset: "fast" })).toMatchObject({
      error: 'Unknown model_preset "fast". Available presets: none (none are configured)',
      hint: "add [virtual.team.model_presets.NAME] with provider and model to the config",
    });
    // The tool's description lists them too.
    expect(team.runs()).toEqual([]);
  });

  it("checks image_paths: each must exist and be an image; good ones go with the onboarding message", async () => {
    team = await startTeamGaggle();
    writeFileSync(join(team.dir, "notes.txt"), "not an image");
    writeFileSync(join(team.dir, "shot.png"), PNG);
    mkdirSync(join(team.dir, "folder.png"));
    const cases: Array<[string, string]> = [
      ["missing.png", `image_paths[0] "missing.png" (${join(team.dir, "missing.png")}) does not exist`],
      ["notes.txt", `image_paths[0] "notes.txt" (${join(team.dir, "notes.txt")}) is not an image: expected PNG, JPEG, GIF, WebP, BMP`],
      ["folder.png", `image_paths[0] "folder.png" (${join(team.dir, "folder.png")}) is not a file`],
    ];
    for (const [path, error] of cases)
      expect(await team.failure("gg_team_manage", { team_id: "t1", image_paths: [path] })).toMatchObject({ code: "INVALID_ARGS", error });
    expect(await team.failure("gg_team_status", { team_id: "t1" })).toMatchObject({ code: "NOT_FOUND" });
    const added = await team.json<{ image_count: number; agent_id: string }>("gg_team_manage", {
      team_id: "t1",
      prompt: "Look.",
      image_paths: ["shot.png"],
    });
    expect(added.image_count).toBe(1);
    await until(
      () => team!.runs().length,
      (count) => count === 1,
    );
    expect(promptOf(team.runs()[0]!)).toContain(
      `Message from lead (team lead): Look.\n\nAttached images (read them from disk): ${join(team.dir, "shot.png")}`,
    );
  });
});

describe("gg_team_message", () => {
  it("refuses unknown teams and recipients, messages to oneself, removed members, bad images and an empty broadcast", async () => {
    team = await startTeamGaggle();
    expect(await team.failure("gg_team_message", { team_id: "nope", recipient_agent_id: "lead", message: "x" })).toMatchObject({
      code: "NOT_FOUND",
      error: 'no team "nope"',
    });
    const a = await team.add("t1", { title: "A" });
    const b = await team.add("t1", { title: "B" });
    expect(await team.failure("gg_team_message", { team_id: "t1", recipient_agent_id: "agent-00000000", message: "x" })).toMatchObject({
      code: "NOT_FOUND",
      error: 'no member "agent-00000000" in team t1',
      hint: `recipients: ${a}, ${b}, or "broadcast"`,
    });
    expect(await team.failure("gg_team_message", { team_id: "t1", recipient_agent_id: "lead", message: "x" })).toMatchObject({
      code: "INVALID_ARGS",
      error: "lead cannot send a message to itself",
    });
    expect(await team.failure("gg_team_message", { team_id: "t1", recipient_agent_id: a, message: "" })).toMatchObject({ code: "INVALID_ARGS" });
    expect(await team.failure("gg_team_message", { team_id: "t1", recipient_agent_id: a, message: "x", image_paths: ["nope.gif"] })).toMatchObject({
      code: "INVALID_ARGS",
      error: expect.stringContaining("does not exist"),
    });
    writeFileSync(join(team.dir, "pic.png"), PNG);
    expect(
      await team.json("gg_team_message", { team_id: "t1", recipient_agent_id: a, message: "see", image_paths: [join(team.dir, "pic.png")] }),
    ).toMatchObject({
      image_count: 1,
      image_paths: [join(team.dir, "pic.png")],
    });
    const removed = await team.json<{ results: unknown[] }>("gg_team_manage", {
      team_id: "t1",
      remove_agent_ids: [a, b, "lead", "agent-00000000", a],
    });
    expect(removed).toMatchObject({ operation: "remove", team_id: "t1", removed_count: 2, failed_count: 2 });
    expect(removed.results).toEqual([
      expect.objectContaining({ agent_id: a, ok: true, state: "removed", worktree_left: null, note: `${a} was removed; it had no worktree.` }),
      expect.objectContaining({ agent_id: b, ok: true }),
      { agent_id: "lead", ok: false, error: { code: "INVALID_ARGS", message: "lead is the lead of team t1 and cannot be removed" } },
      { agent_id: "agent-00000000", ok: false, error: { code: "NOT_FOUND", message: "agent-00000000 is not a member of team t1" } },
    ]);
    expect(await team.failure("gg_team_message", { team_id: "t1", recipient_agent_id: a, message: "x" })).toMatchObject({
      code: "INVALID_ARGS",
      error: expect.stringMatching(new RegExp(`^${a} was removed from team t1 at `)),
    });
    expect(await team.failure("gg_team_message", { team_id: "t1", recipient_agent_id: "broadcast", message: "x" })).toMatchObject({
      code: "INVALID_ARGS",
      error: "there is no one else in team t1 to broadcast to",
    });
    expect((await team.status("t1")).members.map((m) => m.state)).toEqual(["removed", "removed"]);
  });
});

describe("[virtual.team] in the config", () => {
  it("is checked with the rest of the config, naming the key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
    const cases: Array<[string, RegExp]> = [
      ['[virtual.team.model_presets.fast]\nprovider = "openai"\n', /virtual\.team\.model_presets\.fast\.model/],
      ['allow_member_manage = "yes"\n', /virtual\.team\.allow_member_manage: expected true or false/],
      ['worktree_dir = "x"\n', /virtual\.team\.worktree_dir: unknown key; did you mean "worktrees_dir"\?/],
      ['[virtual.team.model_presets."bad name"]\nprovider = "a"\nmodel = "b"\n', /preset names match/],
    ];
    for (const [team, message] of cases) {
      const result = await runCli(["validate", "--config", writeConfig(teamConfig(dir, team))]);
      expect(result.code).toBe(1);
      expect(result.stderr + result.stdout).toMatch(message);
    }
    const ok = await runCli(["validate", "--config", writeConfig(teamConfig(dir, `allow_member_manage = true\nworktrees_dir = "wt"\n${PRESETS}`))]);
    expect(ok.code).toBe(0);
  });
});
