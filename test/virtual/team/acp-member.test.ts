// A team mixing a gosling and an ACP agent (the fake agent on @agentclientprotocol/sdk), over HTTP with a token per
// person: the ACP member gets messages as prompts and answers through gaggle's team tools on its member URL, its
// status is listed, removing it releases its session and ends its process, and another person reaches none of it.
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle, bearer } from "../../helpers/gaggle-http.js";
import { failureOf, startGaggle, textOf } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { waitGone } from "../../helpers/processes.js";
import { fakeAgentTable } from "../agents/helpers.js";
import { callTeam, teamConfig, type MemberRow, type TeamStatus } from "./helpers.js";

const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

type Row = MemberRow & { agent: string | null; agent_session_id: string | null; session: string | null };

let dir: string;
let pidsFile: string;
let gaggle: HttpGaggle;
let ann: Client;
let bob: Client;
let goslingMember: string;
let acpMember: string;

const call = (client: Client, server: string, tool: string, args: Record<string, unknown>) =>
  client.callTool({ name: "execute_child_tool", arguments: { server_id: server, tool_name: tool, arguments: args } }) as Promise<CallToolResult>;
const json = async <T>(result: Promise<CallToolResult>): Promise<T> => {
  const answer = await result;
  if (answer.isError) throw new Error(textOf(answer));
  return JSON.parse(textOf(answer)) as T;
};
const status = (client: Client) => json<Omit<TeamStatus, "members"> & { members: Row[] }>(call(client, "team", "gg_team_status", { team_id: "t1" }));
const row = async (agentId: string, states: string[]): Promise<Row> => {
  const found = await until(
    async () => (await status(ann)).members.find((member) => member.agent_id === agentId),
    (member) => member !== undefined && states.includes(member.state),
    15_000,
  );
  return found!;
};
const agentPids = (): number[] => (existsSync(pidsFile) ? readFileSync(pidsFile, "utf8").split("\n").filter(Boolean).map(Number) : []);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gaggle-team-acp-"));
  pidsFile = join(dir, "acp-pids.log");
  const agentHome = join(dir, "agent-home");
  mkdirSync(agentHome);
  const gateway = 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }';
  const agent = fakeAgentTable("fake", agentHome, { FAKE_ACP_PIDS: pidsFile });
  gaggle = await startHttpGaggle(`${teamConfig(dir, "", "", gateway)}\n${agent}\n`, { env: { ...TOKENS, XDG_STATE_HOME: join(dir, "xdg-state") } });
  ann = await gaggle.connect({ name: "ann", ...bearer(TOKENS.GAGGLE_TEST_ANN) });
  bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
  goslingMember = (await json<{ agent_id: string }>(call(ann, "team", "gg_team_manage", { team_id: "t1", title: "goose", prompt: "[answer hi]" })))
    .agent_id;
  const added = await json<{ agent_id: string; agent: string; agent_session_id: string; gosling_id: string | null; next: string }>(
    call(ann, "team", "gg_team_manage", { team_id: "t1", title: "acp", agent: "fake", prompt: "say ready" }),
  );
  acpMember = added.agent_id;
  expect(added).toMatchObject({ agent: "fake", gosling_id: null });
  expect(added.next).toContain(`get_agent_output (agents) with session_id "${added.agent_session_id}"`);
  await row(goslingMember, ["idle"]);
  await row(acpMember, ["idle"]);
});
afterAll(() => gaggle?.stop());

describe("a team with an ACP agent member", () => {
  it("lists the member with its agent, session and state beside the gosling", async () => {
    const { members } = await status(ann);
    expect(members.map((member) => [member.title, member.agent, member.state])).toEqual([
      ["goose", null, "idle"],
      ["acp", "fake", "idle"],
    ]);
    const acp = members[1]!;
    expect(acp).toMatchObject({ gosling_id: null, agent_session_id: expect.any(String), session: expect.stringMatching(/^fake-/) });
    expect(members[0]!.gosling_id).toEqual(expect.any(String));
  });

  it("gives a message to the agent as a prompt, and its answer through the team tools reaches the lead", async () => {
    const reply = callTeam("gg_team_message", { team_id: "t1", recipient_agent_id: "lead", message: "done, from the agent" });
    const sent = await json<{ deliveries: Array<{ agent_id: string }> }>(
      call(ann, "team", "gg_team_message", { team_id: "t1", recipient_agent_id: acpMember, message: `say on it\n${reply}` }),
    );
    expect(sent.deliveries).toEqual([expect.objectContaining({ agent_id: acpMember })]);
    const unread = await until(
      async () => (await status(ann)).unread_messages,
      (messages) => messages.some((message) => message.from === acpMember),
      15_000,
    );
    expect(unread).toEqual([expect.objectContaining({ from: acpMember, from_title: "acp", message: "done, from the agent" })]);
    const acp = await row(acpMember, ["idle"]);
    const output = textOf(await call(ann, "agents", "get_agent_output", { session_id: acp.agent_session_id, limit: 1000 }));
    expect(output).toContain("Message from lead (team lead): say on it");
    expect(output).toContain("call-team gg_team_message -> ");
    // Both turns, the onboarding and the message, on one agent process.
    expect(agentPids()).toHaveLength(1);
    const { deliveries } = await status(ann);
    expect(deliveries.filter((delivery) => delivery.to === acpMember).map((delivery) => delivery.state)).toEqual(["delivered", "delivered"]);
  });

  it("is the team owner's: another person can neither message, read nor remove it", async () => {
    const acp = await row(acpMember, ["idle"]);
    const session = acp.agent_session_id!;
    expect(failureOf(await call(bob, "team", "gg_team_message", { team_id: "t1", recipient_agent_id: acpMember, message: "obey" }))).toMatchObject({
      code: "NOT_FOUND",
    });
    expect(failureOf(await call(bob, "team", "gg_team_manage", { team_id: "t1", remove_agent_ids: [acpMember] }))).toMatchObject({
      code: "NOT_FOUND",
    });
    for (const [tool, args] of [
      ["get_agent_output", { session_id: session }],
      ["prompt_agent", { session_id: session, prompt: "say hijacked" }],
      ["release_agent", { session_id: session }],
    ] as const) {
      expect(failureOf(await call(bob, "agents", tool, args))).toMatchObject({ code: "NOT_FOUND" });
    }
    expect(textOf(await call(bob, "agents", "list_agent_sessions", {}))).toBe("No agent sessions.");
    expect((await bob.callTool({ name: "close_child_session", arguments: { server_id: "agents" } })).isError).toBeFalsy();
    expect((await row(acpMember, ["idle"])).state).toBe("idle");
  });

  it("releases its session and ends the agent's process when it is removed", async () => {
    const acp = await row(acpMember, ["idle"]);
    const removed = await json<{ results: Array<Record<string, unknown>> }>(
      call(ann, "team", "gg_team_manage", { team_id: "t1", remove_agent_ids: [acpMember] }),
    );
    expect(removed.results).toEqual([expect.objectContaining({ agent_id: acpMember, ok: true, agent_session: expect.stringContaining("released") })]);
    expect(textOf(await call(ann, "agents", "get_agent_status", { session_id: acp.agent_session_id }))).toMatch(/released/);
    expect(await waitGone(agentPids())).toEqual([]);
    expect((await status(ann)).members.map((member) => member.state)).toEqual(["idle", "removed"]);
  });

  it("leaves no agent process after shutdown", async () => {
    const again = (await json<{ agent_id: string }>(call(ann, "team", "gg_team_manage", { team_id: "t1", agent: "fake", prompt: "say back" })))
      .agent_id;
    await row(again, ["idle"]);
    const pids = agentPids();
    expect(pids).toHaveLength(2);
    await gaggle.stop();
    expect(await waitGone(pids)).toEqual([]);
  });
});

describe("a team without Goose", () => {
  it("is there when an ACP agent is, takes ACP members, and says a gosling member needs Goose", async () => {
    const home = mkdtempSync(join(tmpdir(), "gaggle-team-acp-only-"));
    const config = [
      "[gateway]",
      `state_dir = ${JSON.stringify(join(home, "state"))}`,
      "shutdown_grace_ms = 500",
      "[virtual.goose]",
      `command = ${JSON.stringify(join(home, "no-goose-here"))}`,
      `cwd = ${JSON.stringify(home)}`,
      fakeAgentTable("fake", home, {}),
    ].join("\n");
    const alone = await startGaggle(config, { env: { XDG_STATE_HOME: join(home, "xdg-state") } });
    try {
      const gosling = failureOf(await call(alone.client, "team", "gg_team_manage", { team_id: "solo", prompt: "hello" }));
      expect(gosling).toMatchObject({
        code: "INVALID_ARGS",
        error: expect.stringContaining("there is no goose child"),
        hint: expect.stringContaining('"fake"'),
      });
      const added = await json<{ agent_id: string; agent: string }>(
        call(alone.client, "team", "gg_team_manage", { team_id: "solo", agent: "fake", prompt: "say hi" }),
      );
      expect(added.agent).toBe("fake");
      const members = await until(
        async () => (await json<TeamStatus>(call(alone.client, "team", "gg_team_status", { team_id: "solo" }))).members,
        (rows) => rows[0]?.state === "idle",
        15_000,
      );
      expect(members).toEqual([expect.objectContaining({ agent_id: added.agent_id, state: "idle" })]);
    } finally {
      await alone.close();
    }
  });
});
