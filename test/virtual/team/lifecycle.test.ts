// The team child in gaggle: its tools, presets, compaction notices, state that outlives a reconnect, and no leftovers.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { readJsonResource, textOf } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { descendants, waitGone } from "../../helpers/processes.js";
import { savedUserTurns } from "../goose/helpers.js";
import { callTeam, promptOf, startTeamGaggle, type TeamGaggle } from "./helpers.js";

let team: TeamGaggle | undefined;
afterEach(async () => {
  await team?.close();
  team = undefined;
});

interface Inbox {
  unread_count: number;
  messages: Array<{ from: string; kind: string; message: string; read_at: string | null }>;
}

const inbox = (team: TeamGaggle, teamId = "t1") => readJsonResource<Inbox>(team.client, `team://${teamId}/inbox`);

describe("the team child in gaggle", () => {
  it("is registered with three tools whose input schemas are closed, and an inbox resource per team", async () => {
    team = await startTeamGaggle();
    expect(await team.json<never>("gg_team_status", { team_id: "t1" }).catch((error: Error) => error.message)).toContain('"code":"NOT_FOUND"');
    const result = (await team.client.callTool({ name: "get_schema", arguments: { server_id: "team" } })) as CallToolResult;
    const schema = JSON.parse(textOf(result)) as {
      tools: Array<{ name: string; inputSchema: { additionalProperties: boolean; required: string[] } }>;
    };
    expect(schema.tools.map((tool) => [tool.name, tool.inputSchema.required, tool.inputSchema.additionalProperties])).toEqual([
      ["gg_team_manage", ["team_id"], false],
      ["gg_team_message", ["team_id", "recipient_agent_id", "message"], false],
      ["gg_team_status", ["team_id"], false],
    ]);
    await team.add("t1");
    // A built-in child's resources are listed in meta mode too, though its tools are not.
    const { resources } = await team.client.listResources();
    expect(resources.map((resource) => resource.uri)).toContain("team://t1/inbox");
    expect((await inbox(team)).messages).toEqual([]);
  });

  it("with expose = true lists gg_team_* under their own names, and members call them by name", async () => {
    team = await startTeamGaggle({ team: "expose = true" });
    const names = (await team.client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["gg_team_manage", "gg_team_message", "gg_team_status", "execute_child_tool"]));
    const added = JSON.parse(
      textOf(
        (await team.client.callTool({
          name: "gg_team_manage",
          arguments: { team_id: "t1", prompt: callTeam("gg_team_status", { team_id: "t1" }) },
        })) as CallToolResult,
      ),
    ) as { agent_id: string };
    const row = await team.member("t1", added.agent_id);
    expect(await team.transcript(row.gosling_id!)).toMatch(
      new RegExp(`call-team gg_team_status -> \\{"team_id":"t1","lead_agent_id":"lead","caller_agent_id":"${added.agent_id}"`),
    );
    expect((await team.client.listResources()).resources.map((resource) => resource.uri)).toContain("team://t1/inbox");
  });

  it("passes a model preset to Goose as --provider and --model, over [virtual.goose] provider and model", async () => {
    team = await startTeamGaggle({
      team: '[virtual.team.model_presets.fast]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n',
      goose: 'provider = "anthropic"\nmodel = "claude-sonnet-4"',
    });
    const fast = await team.json<{ agent_id: string; session: string; model_preset: string }>("gg_team_manage", {
      team_id: "t1",
      title: "Quick",
      model_preset: "fast",
      prompt: "go",
    });
    expect(fast.model_preset).toBe("fast");
    await team.add("t1", { title: "Default", prompt: "go" });
    await until(
      () => team!.runs().length,
      (count) => count === 2,
    );
    // The two start at once: tell their runs apart by session.
    const first = team.runs().find((run) => run.argv[2] === fast.session);
    const second = team.runs().find((run) => run.argv[2] !== fast.session);
    const url = first!.argv[first!.argv.indexOf("--with-streamable-http-extension") + 1]!;
    expect(first!.argv).toEqual([
      "run",
      "--name",
      fast.session,
      "--text",
      promptOf(first!),
      "--output-format",
      "stream-json",
      "--with-streamable-http-extension",
      url,
      "--provider",
      "openai",
      "--model",
      "gpt-4o-mini",
    ]);
    expect(second!.argv.slice(5)).toEqual([
      "--output-format",
      "stream-json",
      "--provider",
      "anthropic",
      "--model",
      "claude-sonnet-4",
      "--with-streamable-http-extension",
      expect.stringMatching(/\/members\/[A-Za-z0-9_-]{32}\/mcp$/),
    ]);
    // A later turn (a message) keeps the preset and resumes the session.
    await team.member("t1", fast.agent_id);
    await team.json("gg_team_message", { team_id: "t1", recipient_agent_id: fast.agent_id, message: "again" });
    await until(
      () => team!.runs().length,
      (count) => count === 3,
    );
    expect(team.runs()[2]!.argv).toEqual([
      "run",
      "--name",
      fast.session,
      "--resume",
      "--text",
      promptOf(team.runs()[2]!),
      "--output-format",
      "stream-json",
      "--with-streamable-http-extension",
      url,
      "--provider",
      "openai",
      "--model",
      "gpt-4o-mini",
    ]);
  });

  it("tells the member that added one when Goose compacts its context, unless it unsubscribed", async () => {
    team = await startTeamGaggle();
    const loud = await team.add("t1", { title: "Loud", prompt: "[compact]" });
    const quiet = await team.add("t1", { title: "Quiet", prompt: "[compact]", unsubscribe_from_compaction_notifications: true });
    await team.member("t1", quiet);
    const box = await until(
      () => inbox(team!),
      (found) => found.messages.length >= 1,
    );
    expect(box.messages).toEqual([
      expect.objectContaining({
        from: "gaggle",
        kind: "compaction",
        message: `The context of ${loud} ("Loud") was compacted by Goose: Exceeded auto-compact threshold of 80%. Performing auto-compaction...`,
      }),
    ]);
    await team.member("t1", loud);
    expect((await inbox(team)).messages).toHaveLength(1);
  });

  it("close_child_session releases every member's gosling; the next message starts the member again on its Goose session", async () => {
    team = await startTeamGaggle();
    const a = await team.add("t1", { title: "A", prompt: "[hang]" });
    // Its first turn must be in its Goose session before it is stopped, for the resumed run to count it.
    await until(
      () => savedUserTurns(team!.dir),
      (turns) => turns === 1,
    );
    const pids = team.pids();
    await team.client.callTool({ name: "close_child_session", arguments: { server_id: "team" } });
    expect(await waitGone(pids)).toEqual([]);
    const row = await team.member("t1", a, ["exited"]);
    await team.json("gg_team_message", { team_id: "t1", recipient_agent_id: a, message: "wake up" });
    await until(
      () => team!.runs().length,
      (count) => count === 2,
    );
    const restarted = team.runs()[1]!;
    expect(restarted.argv.slice(0, 4)).toEqual(["run", "--name", `gosling-${row.gosling_id!.replace(/-/g, "").slice(0, 8)}`, "--resume"]);
    const after = await team.member("t1", a);
    expect(after.gosling_id).not.toBe(row.gosling_id);
    expect(await team.transcript(after.gosling_id!)).toContain("Turn 2 of session gosling-");
  });
});

describe("state that outlives the connection", () => {
  it("teams, members and unread messages survive the lead reconnecting (a new stdio gaggle); a member starts again when messaged", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
    team = await startTeamGaggle({ dir });
    const added = await team.json<{ agent_id: string; gosling_id: string }>("gg_team_manage", {
      team_id: "t1",
      title: "A",
      prompt: callTeam("gg_team_message", { team_id: "t1", recipient_agent_id: "lead", message: "report 1" }),
    });
    const [a, session] = [added.agent_id, added.gosling_id];
    // The inbox resource shows it without marking it read (gg_team_status would).
    await until(
      () => inbox(team!),
      (box) => box.unread_count === 1,
    );
    await team.close();
    team = await startTeamGaggle({ dir });
    const status = await team.status("t1");
    expect(status.members).toEqual([expect.objectContaining({ agent_id: a, title: "A", state: "exited", gosling_id: session })]);
    expect(status.unread_messages).toEqual([expect.objectContaining({ from: a, message: "report 1" })]);
    expect((await team.status("t1")).unread_count).toBe(0);
    await team.json("gg_team_message", { team_id: "t1", recipient_agent_id: a, message: "next task" });
    await until(
      () => team!.runs().length,
      (count) => count === 2,
    );
    expect(team.runs()[1]!.argv.slice(0, 4)).toEqual(["run", "--name", `gosling-${session.replace(/-/g, "").slice(0, 8)}`, "--resume"]);
    expect(promptOf(team.runs()[1]!)).toMatch(/^Message from lead \(team lead\): next task/);
    const row = await team.member("t1", a);
    expect(row.state).toBe("idle");
  });

  it("over HTTP, a message to a lead whose session went away waits for the lead's next session", async () => {
    team = await startTeamGaggle({ http: true });
    const first = await team.http!.connect({ name: "lead-1" });
    const a = (
      await team.json<{ agent_id: string }>(
        "gg_team_manage",
        { team_id: "t1", prompt: `[slow 800] ${callTeam("gg_team_message", { team_id: "t1", recipient_agent_id: "lead", message: "finished" })}` },
        first,
      )
    ).agent_id;
    await first.close();
    const second = await team.http!.connect({ name: "lead-2" });
    const status = await until(
      () => team!.status("t1", second),
      (found) => found.unread_count === 1,
    );
    expect(status.unread_messages).toEqual([expect.objectContaining({ from: a, message: "finished" })]);
  });
});

describe("the end of members", () => {
  it("nothing a team started outlives gaggle", async () => {
    team = await startTeamGaggle();
    await team.add("t1", { prompt: "[hang] [grandchild] [ignore-term]" });
    await team.add("t1", { prompt: "[slow 60000]" });
    await until(
      () => team!.runs(),
      (runs) => runs.filter((run) => run.argv).length === 2 && runs.some((run) => run.grandchild),
    );
    const pids = team.pids();
    expect(descendants(team.pid)).toEqual(expect.arrayContaining(pids));
    await team.close();
    expect(await waitGone([team.pid, ...pids])).toEqual([]);
  });
});
