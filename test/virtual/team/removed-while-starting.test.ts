// A member removed while it is still starting (its worktree's init script runs) is never started, and its team ends
// as a failed add leaves it: dropped when nothing of it remains, else saved without that member.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { failureOf, textOf } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { branches, makeRepo, startTeamGaggle, type TeamGaggle } from "./helpers.js";

let team: TeamGaggle | undefined;
afterEach(async () => {
  await team?.close();
  team = undefined;
});

/**
 * A gaggle in a fresh repository whose worktree init script says which member it starts (in `starting`), then waits
 * until the test writes a line into the `gate` fifo.
 */
async function gatedRepo(): Promise<{ team: TeamGaggle; starting: string; open: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
  const starting = join(dir, "starting");
  const gate = join(dir, "gate");
  execFileSync("mkfifo", [gate]);
  const script = `#!/bin/sh\necho "$GG_AGENT_ID" > ${JSON.stringify(starting)}\nread line < ${JSON.stringify(gate)}\n`;
  makeRepo(dir, { ".agents/gg/worktree-init.sh": script });
  const started = await startTeamGaggle({ dir, team: `worktrees_dir = ${JSON.stringify(join(dir, "worktrees"))}` });
  // Opening the fifo for writing waits until the script opens it for reading.
  return { team: started, starting, open: () => writeFile(gate, "go\n") };
}

/** The agent id the init script is starting, once it runs. */
async function startingAgent(file: string): Promise<string> {
  await until(
    () => existsSync(file) && readFileSync(file, "utf8").endsWith("\n"),
    (ready) => ready,
  );
  return readFileSync(file, "utf8").trim();
}

/** What goose's list_goslings says: every gosling gaggle started, released or not. */
async function goslings(team: TeamGaggle): Promise<string> {
  const result = (await team.client.callTool({
    name: "execute_child_tool",
    arguments: { server_id: "goose", tool_name: "list_goslings", arguments: {} },
  })) as CallToolResult;
  return textOf(result);
}

const teamFile = (team: TeamGaggle, teamId: string) => join(team.dir, "state", "team", "teams", "local", `${teamId}.json`);

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
