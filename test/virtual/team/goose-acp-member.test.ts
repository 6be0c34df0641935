// A gosling member over `goose acp` (the fake goose with FAKE_GOOSE_ACP=1): its member URL reaches Goose as an HTTP
// MCP server of its session, its turns share one process, and after its gosling is released the next message
// continues the same ACP session in a new process (session/load).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../../helpers/poll.js";
import { waitGone } from "../../helpers/processes.js";
import { callTeam, startTeamGaggle, type TeamGaggle } from "./helpers.js";

let team: TeamGaggle;
let member: string;

const acpRuns = () => team.runs().filter((run) => run.argv[0] === "acp");

beforeAll(async () => {
  team = await startTeamGaggle({ env: { FAKE_GOOSE_ACP: "1", FAKE_ACP_STATE: mkdtempSync(join(tmpdir(), "gaggle-acp-state-")) } });
  member = await team.add("t1", { title: "acp goose", prompt: "say ready" });
  await team.member("t1", member, ["idle"]);
});
afterAll(() => team?.close());

describe("a gosling member over goose acp", () => {
  it("answers the lead through its member URL, every turn on one goose acp process", async () => {
    const reply = callTeam("gg_team_message", { team_id: "t1", recipient_agent_id: "lead", message: "pong over acp" });
    await team.json("gg_team_message", { team_id: "t1", recipient_agent_id: member, message: `whoami\n${reply}` });
    const unread = await until(
      async () => (await team.status("t1")).unread_messages,
      (messages) => messages.length > 0,
      15_000,
    );
    expect(unread).toEqual([expect.objectContaining({ from: member, message: "pong over acp" })]);
    await team.member("t1", member, ["idle"]);
    expect(acpRuns()).toHaveLength(1);
    expect(team.runs().filter((run) => run.argv[0] === "run")).toEqual([]);
  });

  it("continues its ACP session in a new process after its gosling was released", async () => {
    const first = acpRuns()[0]!.pid;
    await team.client.callTool({ name: "close_child_session", arguments: { server_id: "team" } });
    expect(await waitGone([first])).toEqual([]);
    await team.json("gg_team_message", { team_id: "t1", recipient_agent_id: member, message: "once more\nwhoami" });
    const row = await until(
      () => team.member("t1", member, ["idle"]),
      (found) => found.gosling_id !== null && acpRuns().length === 2,
      15_000,
    );
    const transcript = await team.transcript(row.gosling_id!);
    // Its third turn: the conversation the first process had goes on.
    expect(transcript).toMatch(/pid \d+ turn 3 session fake-\d+-\d+/);
    expect(transcript).toContain("Runs over: goose acp");
  });
});
