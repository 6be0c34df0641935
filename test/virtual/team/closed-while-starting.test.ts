// close_child_session("team") while a member's add is still starting (its worktree's init script runs): the member is
// never started, its add fails naming the close, and its team ends as a failed add leaves it.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { failureOf, textOf } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import {
  branches,
  gatedRepo,
  goslings,
  makeRepo,
  promptOf,
  startingAgent,
  teamConfig,
  teamFile,
  type TeamGaggle,
  type TeamStatus,
} from "./helpers.js";
import { readRuns } from "../goose/helpers.js";

const ANN = "ann-token-7Hc2nQ4wZe";
const BOB = "bob-token-3Rt6yK8mXa";

let team: TeamGaggle | undefined;
let gaggle: HttpGaggle | undefined;
afterEach(async () => {
  await team?.close();
  team = undefined;
  await gaggle?.stop();
  gaggle = undefined;
});

async function closeTeamChild(team: TeamGaggle): Promise<void> {
  const closed = await team.client.callTool({ name: "close_child_session", arguments: { server_id: "team" } });
  expect(closed.isError).toBeFalsy();
}

describe('close_child_session("team") while a member is starting', () => {
  it("as a new team's first and only member: the add fails naming the close, nothing starts, and the team is gone", async () => {
    const gated = await gatedRepo();
    team = gated.team;
    const adding = team.call("gg_team_manage", { team_id: "t1", worktree_name: "w1", prompt: "[hang] late work" });
    const agentId = await startingAgent(gated.starting);
    expect((await team.status("t1")).members).toEqual([expect.objectContaining({ agent_id: agentId, state: "starting" })]);

    await closeTeamChild(team);
    await gated.open();

    const failed = failureOf(await adding);
    expect(failed.code).toBe("CANCELLED");
    expect(failed.error).toBe(`${agentId} of team t1 was not started: the team child was closed`);
    expect(await goslings(team)).toContain("Found 0 goslings");
    expect(team.runs().filter((run) => promptOf(run).includes("late work"))).toEqual([]);
    expect(existsSync(teamFile(team, "t1"))).toBe(false);
    expect((await team.failure("gg_team_status", { team_id: "t1" })).code).toBe("NOT_FOUND");
    // The worktree made for it went with the failed add.
    expect(branches(team.dir)).toEqual(["main"]);
    // The close stopped nothing for good: the next add creates the team again and starts its member.
    const again = await team.json<{ team_created: boolean; agent_id: string }>("gg_team_manage", { team_id: "t1", prompt: "hello" });
    expect(again.team_created).toBe(true);
    await team.member("t1", again.agent_id);
  });

  it("in a team with a started member: that one is released, the starting one never starts, the team file holds the first alone", async () => {
    const gated = await gatedRepo();
    team = gated.team;
    // Added without a worktree, so the init script holds only the second add.
    const first = await team.add("t1", { title: "First", prompt: "[hang] first's work" });
    await team.member("t1", first, ["working"]);
    const adding = team.call("gg_team_manage", { team_id: "t1", worktree_name: "w2", title: "Second", prompt: "[hang] second's work" });
    const second = await startingAgent(gated.starting);
    expect((await team.status("t1")).members.map((row) => [row.agent_id, row.state])).toEqual([
      [first, "working"],
      [second, "starting"],
    ]);

    await closeTeamChild(team);
    await gated.open();

    const failed = failureOf(await adding);
    expect(failed.code).toBe("CANCELLED");
    expect(failed.error).toBe(`${second} of team t1 was not started: the team child was closed`);
    expect(team.runs().filter((run) => promptOf(run).includes("second's work"))).toEqual([]);
    expect(await goslings(team)).toContain("Found 1 gosling");
    expect((await team.status("t1")).members.map((row) => [row.agent_id, row.state])).toEqual([[first, "exited"]]);
    const saved = JSON.parse(readFileSync(teamFile(team, "t1"), "utf8")) as { members: Array<{ agent_id: string }> };
    expect(saved.members.map((member) => member.agent_id)).toEqual([first]);
    expect(branches(team.dir)).toEqual(["main"]);
  });
});

describe('close_child_session("team") by one of two people while members start', () => {
  it("stops only the closer's own starting member: another person's add goes on and its member starts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
    const starting = join(dir, "starting");
    const gate = join(dir, "gate");
    execFileSync("mkfifo", [gate]);
    makeRepo(dir, {
      ".agents/gg/worktree-init.sh": `#!/bin/sh\necho "$GG_AGENT_ID" > ${JSON.stringify(starting)}\nread line < ${JSON.stringify(gate)}\n`,
    });
    const config = teamConfig(
      dir,
      `worktrees_dir = ${JSON.stringify(join(dir, "worktrees"))}`,
      "",
      `auth_tokens = { ann = "${ANN}", bob = "${BOB}" }`,
    );
    gaggle = await startHttpGaggle(config, { env: { XDG_STATE_HOME: join(dir, "xdg-state") } });
    const ann = await gaggle.connect({ name: "ann", headers: { authorization: `Bearer ${ANN}` } });
    const bob = await gaggle.connect({ name: "bob", headers: { authorization: `Bearer ${BOB}` } });
    const team = (client: Client, tool: string, args: Record<string, unknown>) =>
      client.callTool({ name: "execute_child_tool", arguments: { server_id: "team", tool_name: tool, arguments: args } }) as Promise<CallToolResult>;
    const closeTeam = async (client: Client) =>
      expect((await client.callTool({ name: "close_child_session", arguments: { server_id: "team" } })).isError).toBeFalsy();
    /** Holds the next add in its init script until `open`; the gate fifo takes one line per add. */
    const held = async (client: Client, args: Record<string, unknown>) => {
      rmSync(starting, { force: true });
      const adding = team(client, "gg_team_manage", args);
      return { adding, agentId: await startingAgent(starting), open: () => writeFile(gate, "go\n") };
    };

    // Bob's close leaves ann's starting member alone.
    const annsFirst = await held(ann, { team_id: "t1", worktree_name: "w1", prompt: "[hang] ann's first" });
    await closeTeam(bob);
    await annsFirst.open();
    const added = JSON.parse(textOf(await annsFirst.adding)) as { agent_id: string; gosling_id: string };
    expect(added.agent_id).toBe(annsFirst.agentId);
    const runsOf = (words: string) => readRuns(join(dir, "argv.jsonl")).filter((run) => promptOf(run).includes(words));
    expect(
      await until(
        () => runsOf("ann's first").length,
        (count) => count > 0,
      ),
    ).toBe(1);

    // Ann's own close stops her next starting member, which never starts.
    const annsSecond = await held(ann, { team_id: "t1", worktree_name: "w2", prompt: "[hang] ann's second" });
    await closeTeam(ann);
    await annsSecond.open();
    const failed = failureOf(await annsSecond.adding);
    expect(failed.code).toBe("CANCELLED");
    expect(failed.error).toBe(`${annsSecond.agentId} of team t1 was not started: the team child was closed`);
    expect(runsOf("ann's second")).toEqual([]);
    const status = JSON.parse(textOf(await team(ann, "gg_team_status", { team_id: "t1" }))) as TeamStatus;
    expect(status.members.map((row) => [row.agent_id, row.state])).toEqual([[added.agent_id, "exited"]]);
    expect(branches(dir)).toEqual(["@ann/w1", "main"]);
  });
});
