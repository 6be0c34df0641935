// A member's turn on a message fails (the fake ACP agent answers the prompt with an error, refuses it, or dies during
// it; a fake gosling crashes): the team's lead hears which member, which message and why, as a notice from gaggle,
// over HTTP with a token per person, and another person's lead hears nothing of it.
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle, bearer } from "../../helpers/gaggle-http.js";
import { textOf } from "../../helpers/gaggle.js";
import { listen, type Heard } from "../../helpers/notifications.js";
import { until } from "../../helpers/poll.js";
import type { TurnFailureRecord } from "../../../src/virtual/team/records.js";
import { fakeAgentTable } from "../agents/helpers.js";
import { teamConfig, type MemberRow, type TeamStatus, type UnreadRow } from "./helpers.js";

const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

type Failure = TurnFailureRecord;
type Notice = UnreadRow & { failure?: Failure };
type Status = Omit<TeamStatus, "unread_messages" | "members"> & {
  unread_messages: Notice[];
  members: Array<MemberRow & { agent_session_id: string | null }>;
};
/** A turn_failed notice as the lead's client hears it (a log message's data). */
interface HeardNotice {
  team_id: string;
  kind: string;
  from: string;
  inbox: string;
  text: string;
  failure: Failure;
}

let gaggle: HttpGaggle;
let ann: Client;
let bob: Client;
let annHeard: Heard;
let bobHeard: Heard;
let annsAgent: string;
let annsGosling: string;
let bobsAgent: string;

const call = (client: Client, tool: string, args: Record<string, unknown>) =>
  client.callTool({ name: "execute_child_tool", arguments: { server_id: "team", tool_name: tool, arguments: args } }) as Promise<CallToolResult>;
const json = async <T>(result: Promise<CallToolResult>): Promise<T> => {
  const answer = await result;
  if (answer.isError) throw new Error(textOf(answer));
  return JSON.parse(textOf(answer)) as T;
};
const status = (client: Client, teamId: string) => json<Status>(call(client, "gg_team_status", { team_id: teamId }));
const idle = async (client: Client, teamId: string, agentId: string) =>
  until(
    async () => (await status(client, teamId)).members.find((member) => member.agent_id === agentId),
    (member) => member?.state === "idle",
    15_000,
  );
const send = (client: Client, teamId: string, to: string, message: string) =>
  json<{ message_id: string; delivery_ids: string[] }>(call(client, "gg_team_message", { team_id: teamId, recipient_agent_id: to, message }));
/** The turn_failed notices a client heard (logger "team"). */
const noticesOf = (heard: Heard) =>
  heard.logs.filter((log) => log.logger === "team" && (log.data as { kind?: string }).kind === "turn_failed").map((log) => log.data as HeardNotice);
const noticeAbout = (heard: Heard, messageId: string) =>
  until(
    () => noticesOf(heard).find((notice) => notice.failure.message_id === messageId),
    (found) => found !== undefined,
    15_000,
  ).then((found) => found!);

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-team-turn-failed-"));
  const agentHome = join(dir, "agent-home");
  mkdirSync(agentHome);
  const gateway = 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }';
  // Sessions outlive the agent's process: the one a crash ends is loaded again in the next.
  const env = { FAKE_ACP_STATE: join(dir, "acp-state") };
  const agent = fakeAgentTable("fake", agentHome, env);
  // The same agent, its turns cut at 0.6 s.
  const slow = `${fakeAgentTable("slow", agentHome, env)}\nprompt_timeout_minutes = 0.01`;
  gaggle = await startHttpGaggle(`${teamConfig(dir, "", "", gateway)}\n${agent}\n${slow}\n`, {
    env: { ...TOKENS, XDG_STATE_HOME: join(dir, "xdg-state") },
  });
  ann = await gaggle.connect({ name: "ann", ...bearer(TOKENS.GAGGLE_TEST_ANN) });
  bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
  annHeard = listen(ann);
  bobHeard = listen(bob);
  const add = async (client: Client, teamId: string, args: Record<string, unknown>) =>
    (await json<{ agent_id: string }>(call(client, "gg_team_manage", { team_id: teamId, ...args }))).agent_id;
  annsAgent = await add(ann, "t-ann", { title: "acp", agent: "fake", prompt: "say ready" });
  annsGosling = await add(ann, "t-ann", { title: "goose", prompt: "[answer ready]" });
  bobsAgent = await add(bob, "t-bob", { title: "bobs", agent: "fake", prompt: "say ready" });
  for (const [client, teamId, agentId] of [
    [ann, "t-ann", annsAgent],
    [ann, "t-ann", annsGosling],
    [bob, "t-bob", bobsAgent],
  ] as const)
    await idle(client, teamId, agentId);
});
afterAll(() => gaggle?.stop());

describe("a member's failed turn", () => {
  it("the agent answering the prompt with an error: the lead hears which member, which message, and the agent's error", async () => {
    const sent = await send(ann, "t-ann", annsAgent, "work\nfail the model is overloaded");
    const notice = await noticeAbout(annHeard, sent.message_id);
    // Read at once: gg_team_status marks what it returns read.
    const read = await status(ann, "t-ann");
    const session = read.members.find((member) => member.agent_id === annsAgent)!.agent_session_id;
    expect(notice).toMatchObject({
      team_id: "t-ann",
      kind: "turn_failed",
      from: "gaggle",
      inbox: "team://t-ann/inbox",
      failure: {
        agent_id: annsAgent,
        title: "acp",
        message_id: sent.message_id,
        delivery_id: sent.delivery_ids[0],
        agent_session_id: session,
        gosling_id: null,
        state: "failed",
        problem: expect.stringContaining("the model is overloaded"),
      },
    });
    expect(notice.text).toMatch(
      new RegExp(`^The turn of ${annsAgent} \\("acp"\\) on message ${sent.message_id} from lead failed \\(failed\\): .*the model is overloaded`),
    );
    expect(notice.text).toContain(`get_agent_output (agents) with session_id "${session}"`);
    // It waits in the lead's inbox like any message to the lead, and the member's delivery stays delivered.
    expect(read.unread_messages).toEqual([expect.objectContaining({ kind: "turn_failed", from: "gaggle", failure: notice.failure })]);
    expect(read.deliveries.find((delivery) => delivery.delivery_id === sent.delivery_ids[0])).toMatchObject({ state: "delivered" });
  });

  it("the agent refusing the turn: the lead hears the stop reason", async () => {
    const sent = await send(ann, "t-ann", annsAgent, "work\nrefuse");
    const notice = await noticeAbout(annHeard, sent.message_id);
    expect(notice.failure).toMatchObject({ agent_id: annsAgent, state: "completed", problem: "stop reason: refusal" });
    await idle(ann, "t-ann", annsAgent);
  });

  it("the agent's process dying during the turn: the lead hears its exit code and stderr, and the member takes the next message", async () => {
    const sent = await send(ann, "t-ann", annsAgent, "work\ncrash out of memory");
    const notice = await noticeAbout(annHeard, sent.message_id);
    expect(notice.failure).toMatchObject({ agent_id: annsAgent, state: "failed" });
    expect(notice.failure.problem).toMatch(/process ended during the turn \(exit code 3; stderr: out of memory\)/);
    const next = await send(ann, "t-ann", annsAgent, "say back again");
    await until(
      async () => (await status(ann, "t-ann")).deliveries.find((delivery) => delivery.delivery_id === next.delivery_ids[0])?.state,
      (state) => state === "delivered",
      15_000,
    );
    await idle(ann, "t-ann", annsAgent);
    expect(noticesOf(annHeard).map((each) => each.failure.message_id)).not.toContain(next.message_id);
  });

  it("a turn cut at prompt_timeout_minutes: the lead hears the limit it ran past", async () => {
    const slow = await json<{ agent_id: string }>(
      call(ann, "gg_team_manage", { team_id: "t-ann", title: "slow", agent: "slow", prompt: "say ready" }),
    );
    await idle(ann, "t-ann", slow.agent_id);
    const sent = await send(ann, "t-ann", slow.agent_id, "work\nhang");
    const notice = await noticeAbout(annHeard, sent.message_id);
    expect(notice.failure).toMatchObject({
      agent_id: slow.agent_id,
      title: "slow",
      state: "cancelled",
      problem: "it ran past prompt_timeout_minutes (0.6s)",
    });
  });

  it("a gosling member's failed turn reaches the lead the same way", async () => {
    const sent = await send(ann, "t-ann", annsGosling, "[crash]");
    const notice = await noticeAbout(annHeard, sent.message_id);
    expect(notice.failure).toMatchObject({
      agent_id: annsGosling,
      title: "goose",
      state: "error",
      agent_session_id: null,
      gosling_id: expect.any(String),
    });
    expect(notice.failure.problem).toMatch(/101/);
  });

  it("reaches only its own team's lead: another person's lead hears nothing of it, and theirs only of their own", async () => {
    const sent = await send(bob, "t-bob", bobsAgent, "work\nfail bob's own trouble");
    const bobs = await noticeAbout(bobHeard, sent.message_id);
    expect(bobs).toMatchObject({ team_id: "t-bob", failure: { agent_id: bobsAgent, problem: expect.stringContaining("bob's own trouble") } });
    expect(noticesOf(bobHeard).map((notice) => notice.team_id)).toEqual(["t-bob"]);
    expect(JSON.stringify(bobHeard.logs)).not.toContain(annsAgent);
    expect(noticesOf(annHeard).every((notice) => notice.team_id === "t-ann")).toBe(true);
    expect(JSON.stringify(annHeard.logs)).not.toContain(bobsAgent);
    const bobsStatus = await status(bob, "t-bob");
    expect(bobsStatus.unread_messages.map((notice) => notice.failure?.agent_id)).toEqual([bobsAgent]);
    expect(JSON.stringify((await status(ann, "t-ann")).unread_messages)).not.toContain("bob's own trouble");
  });
});
