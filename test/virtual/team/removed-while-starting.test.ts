// A member removed while it is still starting (its worktree's init script runs) is never started, and its team ends
// as a failed add leaves it: dropped when nothing of it remains, else saved without that member.
import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { failureOf } from "../../helpers/gaggle.js";
import { branches, gatedRepo, goslings, startingAgent, teamFile, type TeamGaggle } from "./helpers.js";

let team: TeamGaggle | undefined;
afterEach(async () => {
  await team?.close();
  team = undefined;
});

describe("a member removed while it starts", () => {
  it("as a new team's first and only member: the add fails, nothing starts, and the team is gone", async () => {
    const gated = await gatedRepo();
    team = gated.team;
    const adding = team.call("gg_team_manage", { team_id: "t1", worktree_name: "w1", prompt: "[hang] work" });
    const agentId = await startingAgent(gated.starting);
    expect((await team.status("t1")).members).toEqual([expect.objectContaining({ agent_id: agentId, state: "starting" })]);

    const removed = await team.json<{ removed_count: number; results: Array<Record<string, unknown>> }>("gg_team_manage", {
      team_id: "t1",
      remove_agent_ids: [agentId],
    });
    expect(removed.removed_count).toBe(1);
    expect(removed.results[0]).toMatchObject({ agent_id: agentId, ok: true, state: "removed", was: "starting" });
    // Its add takes back the worktree it was making, so none is left.
    expect(removed.results[0]).toMatchObject({
      worktree_left: null,
      note: `${agentId} was removed; its add fails, and a worktree made for it goes with its branch.`,
    });
    await gated.open();

    const failed = failureOf(await adding);
    expect(failed.code).toBe("CANCELLED");
    expect(failed.error).toBe(`${agentId} was removed from team t1 while it was starting`);
    expect(await goslings(team)).toContain("Found 0 goslings");
    expect(existsSync(teamFile(team, "t1"))).toBe(false);
    expect((await team.failure("gg_team_status", { team_id: "t1" })).code).toBe("NOT_FOUND");
    // The worktree made for it went with the failed add.
    expect(branches(team.dir)).toEqual(["main"]);
    // The next add creates the team again.
    const again = await team.json<{ team_created: boolean }>("gg_team_manage", { team_id: "t1", prompt: "hello" });
    expect(again.team_created).toBe(true);
  });

  it("while another member of the new team has started: the team is saved with that member alone", async () => {
    const gated = await gatedRepo();
    team = gated.team;
    const adding = team.call("gg_team_manage", { team_id: "t1", worktree_name: "w1", prompt: "[hang] work" });
    const agentId = await startingAgent(gated.starting);
    const other = await team.json<{ agent_id: string; team_created: boolean }>("gg_team_manage", { team_id: "t1", title: "Other" });
    expect(other.team_created).toBe(true);

    await team.json("gg_team_manage", { team_id: "t1", remove_agent_ids: [agentId] });
    await gated.open();
    expect(failureOf(await adding).code).toBe("CANCELLED");

    expect((await team.status("t1")).members.map((row) => row.agent_id)).toEqual([other.agent_id]);
    const saved = JSON.parse(readFileSync(teamFile(team, "t1"), "utf8")) as { members: Array<{ agent_id: string }> };
    expect(saved.members.map((member) => member.agent_id)).toEqual([other.agent_id]);
    expect(await goslings(team)).toContain("Found 1 gosling");
  });
});
