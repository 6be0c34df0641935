// close_child_session("team") held while a member's turn is being stopped, and meanwhile a message to a member that
// would restart it: the member is not restarted during the close, the message waits (`deferred`, saying why), and the
// next team call after the close delivers it; a team call of that person during the close frees their members only
// until the close ends. Nothing the team started outlives the test's last close.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { textOf } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { waitGone } from "../../helpers/processes.js";
import { readRuns } from "../goose/helpers.js";
import { promptOf, startTeamGaggle, teamConfig, type TeamGaggle, type TeamStatus } from "./helpers.js";

const ANN = "ann-token-2Vb7nK4qWs";
const BOB = "bob-token-8Jd3xP6mLc";

let team: TeamGaggle | undefined;
let gaggle: HttpGaggle | undefined;
let dirOfRuns: string | undefined;
afterEach(async () => {
  // A test that failed with a turn held leaves it holding: it is killed, by its pid, before gaggle stops.
  const pids = [...(team?.pids() ?? []), ...(dirOfRuns ? readRuns(join(dirOfRuns, "argv.jsonl")).map((run) => run.pid) : [])];
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  await team?.close();
  team = undefined;
  await gaggle?.stop();
  gaggle = undefined;
  dirOfRuns = undefined;
});

async function closeTeamChild(team: TeamGaggle): Promise<void> {
  const closed = await team.client.callTool({ name: "close_child_session", arguments: { server_id: "team" } });
  expect(closed.isError).toBeFalsy();
}

describe('close_child_session("team") while a message would restart a member', () => {
  it("restarts no one during the close: the message waits deferred, and the next team call delivers it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
    // The held turn stops only when the test opens its gate; the grace before a kill outlasts the test.
    const gate = join(dir, "gate");
    execFileSync("mkfifo", [gate]);
    team = await startTeamGaggle({ dir, gateway: "shutdown_grace_ms = 120000" });
    const resting = await team.add("t1", { title: "Resting", prompt: "hello" });
    await team.member("t1", resting);
    // A first close releases it: a message to it now restarts it.
    await closeTeamChild(team);
    await team.member("t1", resting, ["exited"]);
    const holding = await team.add("t1", { title: "Holding", prompt: `[hang] [hold-term ${gate}]` });
    await team.member("t1", holding, ["working"]);
    // Its goose process runs (and so will hear the close's SIGTERM).
    await until(
      () => team!.runs().some((run) => promptOf(run).includes("[hold-term")),
      (running) => running,
    );

    const closing = team.client.callTool({ name: "close_child_session", arguments: { server_id: "team" } });
    // Awaited below; a test failing before then still sees no unhandled rejection at its gaggle's stop.
    closing.catch(() => undefined);
    // The close is stopping the holding member's turn, and waits for it.
    await until(
      () => existsSync(`${gate}.term`),
      (asked) => asked,
    );
    const receipt = await team.json<{ delivery_ids: string[] }>("gg_team_message", {
      team_id: "t1",
      recipient_agent_id: resting,
      message: "sent while the team child closes",
    });
    const during = await team.status("t1");
    expect(during.deliveries.find((row) => row.delivery_id === receipt.delivery_ids[0])).toMatchObject({
      to: resting,
      state: "deferred",
      reason: "the team child is being closed; the message waits for the next team call",
    });
    expect(during.members.find((row) => row.agent_id === resting)?.state).toBe("exited");
    const runsOfMessage = () => team!.runs().filter((run) => promptOf(run).includes("sent while the team child closes"));
    expect(runsOfMessage()).toEqual([]);

    await writeFile(gate, "go\n");
    expect((await closing).isError).toBeFalsy();
    // The close's end starts no one: the message still waits, for the next team call.
    expect(runsOfMessage()).toEqual([]);
    const after = await team.status("t1");
    expect(after.deliveries.find((row) => row.delivery_id === receipt.delivery_ids[0])?.state).toBe("deferred");
    expect(after.members.map((row) => [row.agent_id, row.state])).toEqual([
      [resting, "exited"],
      [holding, "exited"],
    ]);

    // That status call was a team call: it tried the message again, and the member is restarted on it.
    const delivered = await until(
      async () => (await team!.status("t1")).deliveries.find((row) => row.delivery_id === receipt.delivery_ids[0]),
      (row) => row?.state === "delivered",
    );
    expect(delivered?.state).toBe("delivered");
    expect(
      await until(
        () => runsOfMessage().length,
        (count) => count > 0,
      ),
    ).toBe(1);
    await team.member("t1", resting);
    await closeTeamChild(team);
    expect(await waitGone(team.pids())).toEqual([]);
  });
});

describe('close_child_session("team") by two people at once', () => {
  it("holds one person's members while their close runs, though another's close ended meanwhile", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
    dirOfRuns = dir;
    const gate = join(dir, "gate");
    execFileSync("mkfifo", [gate]);
    const config = teamConfig(dir, "", "", `auth_tokens = { ann = "${ANN}", bob = "${BOB}" }\nshutdown_grace_ms = 120000`);
    gaggle = await startHttpGaggle(config, { env: { XDG_STATE_HOME: join(dir, "xdg-state") } });
    const ann = await gaggle.connect({ name: "ann", headers: { authorization: `Bearer ${ANN}` } });
    const bob = await gaggle.connect({ name: "bob", headers: { authorization: `Bearer ${BOB}` } });
    const call = async (client: Client, tool: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({
        name: "execute_child_tool",
        arguments: { server_id: "team", tool_name: tool, arguments: args },
      })) as CallToolResult;
      if (result.isError) throw new Error(`${tool} failed: ${textOf(result)}`);
      return JSON.parse(textOf(result)) as Record<string, unknown>;
    };
    const close = async (client: Client) =>
      expect((await client.callTool({ name: "close_child_session", arguments: { server_id: "team" } })).isError).toBeFalsy();
    const stateOf = async (agentId: unknown) =>
      ((await call(bob, "gg_team_status", { team_id: "t-bob" })) as unknown as TeamStatus).members.find((row) => row.agent_id === agentId)?.state;
    const runs = () => readRuns(join(dir, "argv.jsonl"));

    const resting = (await call(bob, "gg_team_manage", { team_id: "t-bob", title: "Resting", prompt: "hello" })).agent_id;
    await until(
      () => stateOf(resting),
      (state) => state === "idle",
    );
    await close(bob);
    await call(bob, "gg_team_manage", { team_id: "t-bob", title: "Holding", prompt: `[hang] [hold-term ${gate}]` });
    await until(
      () => runs().some((run) => promptOf(run).includes("[hold-term")),
      (running) => running,
    );
    const bobsClose = bob.callTool({ name: "close_child_session", arguments: { server_id: "team" } });
    bobsClose.catch(() => undefined);
    await until(
      () => existsSync(`${gate}.term`),
      (asked) => asked,
    );
    // Ann's close begins and ends while bob's is held.
    await close(ann);

    const receipt = (await call(bob, "gg_team_message", { team_id: "t-bob", recipient_agent_id: resting, message: "sent during bob's close" })) as {
      delivery_ids: string[];
    };
    const during = (await call(bob, "gg_team_status", { team_id: "t-bob" })) as unknown as TeamStatus;
    expect(during.deliveries.find((row) => row.delivery_id === receipt.delivery_ids[0])).toMatchObject({
      state: "deferred",
      reason: "the team child is being closed; the message waits for the next team call",
    });
    expect(runs().filter((run) => promptOf(run).includes("sent during bob's close"))).toEqual([]);

    await writeFile(gate, "go\n");
    expect((await bobsClose).isError).toBeFalsy();
    expect(await waitGone(runs().map((run) => run.pid))).toEqual([]);
  });
});

describe("a team call of the same person while their close of the team child runs", () => {
  it("leaves their members held once the close ends: another person's turn ending restarts none, their next team call does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
    dirOfRuns = dir;
    const gate = join(dir, "gate");
    execFileSync("mkfifo", [gate]);
    const config = teamConfig(dir, "", "", `auth_tokens = { ann = "${ANN}", bob = "${BOB}" }\nshutdown_grace_ms = 120000`);
    gaggle = await startHttpGaggle(config, { env: { XDG_STATE_HOME: join(dir, "xdg-state") } });
    const ann = await gaggle.connect({ name: "ann", headers: { authorization: `Bearer ${ANN}` } });
    const bob = await gaggle.connect({ name: "bob", headers: { authorization: `Bearer ${BOB}` } });
    const call = async (client: Client, tool: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({
        name: "execute_child_tool",
        arguments: { server_id: "team", tool_name: tool, arguments: args },
      })) as CallToolResult;
      if (result.isError) throw new Error(`${tool} failed: ${textOf(result)}`);
      return JSON.parse(textOf(result)) as Record<string, unknown>;
    };
    const stateOf = async (client: Client, teamId: string, agentId: unknown) =>
      ((await call(client, "gg_team_status", { team_id: teamId })) as unknown as TeamStatus).members.find((row) => row.agent_id === agentId)?.state;
    const runs = () => readRuns(join(dir, "argv.jsonl"));
    const runOf = (words: string) =>
      until(
        () => runs().find((run) => promptOf(run).includes(words)),
        (run) => run !== undefined,
      );

    const resting = (await call(ann, "gg_team_manage", { team_id: "t-ann", title: "Resting", prompt: "hello" })).agent_id;
    await until(
      () => stateOf(ann, "t-ann", resting),
      (state) => state === "idle",
    );
    // Bob's member works through ann's close; its turn ends after it, when the test kills its goose.
    await call(bob, "gg_team_manage", { team_id: "t-bob", title: "Busy", prompt: "bob's long job [hang]" });
    const bobsTurn = (await runOf("bob's long job"))!;
    await call(ann, "gg_team_manage", { team_id: "t-ann", title: "Holding", prompt: `[hang] [hold-term ${gate}]` });
    await runOf("[hold-term");

    const annsClose = ann.callTool({ name: "close_child_session", arguments: { server_id: "team" } });
    annsClose.catch(() => undefined);
    // The close is stopping the holding member's turn, and waits for it.
    await until(
      () => existsSync(`${gate}.term`),
      (asked) => asked,
    );
    // Ann's team call lands during her close: it lets her members start again, and the close still runs.
    const receipt = (await call(ann, "gg_team_message", { team_id: "t-ann", recipient_agent_id: resting, message: "sent during ann's close" })) as {
      delivery_ids: string[];
    };
    await writeFile(gate, "go\n");
    expect((await annsClose).isError).toBeFalsy();

    // Bob's member's turn ends: waiting deliveries are tried, ann's among them, without a team call of ann's.
    process.kill(bobsTurn.pid, "SIGKILL");
    const saved = () => {
      const file = join(dir, "state", "team", "teams", "ann", "t-ann.json");
      const record = JSON.parse(readFileSync(file, "utf8")) as { deliveries: Array<{ delivery_id: string; state: string; reason: string | null }> };
      return record.deliveries.find((row) => row.delivery_id === receipt.delivery_ids[0]);
    };
    const tried = await until(
      saved,
      (row) => row?.state === "delivered" || row?.reason !== "the team child is being closed; the message waits for the next team call",
    );
    expect(tried).toMatchObject({ state: "deferred", reason: "the team child was closed; the message waits for the next team call" });
    expect(runs().filter((run) => promptOf(run).includes("sent during ann's close"))).toEqual([]);

    // Ann's next team call starts her member on the message.
    const delivered = await until(
      async () =>
        ((await call(ann, "gg_team_status", { team_id: "t-ann" })) as unknown as TeamStatus).deliveries.find(
          (row) => row.delivery_id === receipt.delivery_ids[0],
        ),
      (row) => row?.state === "delivered",
    );
    expect(delivered?.state).toBe("delivered");
    await runOf("sent during ann's close");
    for (const client of [ann, bob])
      expect((await client.callTool({ name: "close_child_session", arguments: { server_id: "team" } })).isError).toBeFalsy();
    expect(await waitGone(runs().map((run) => run.pid))).toEqual([]);
  });
});
