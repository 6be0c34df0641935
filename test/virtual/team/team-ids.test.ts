// Team ids are each principal's own: two people's teams of one id are two teams, each reached, heard of and kept
// as its owner's alone, across a restart; a team file of the layout where ids were shared loads for its owner.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { readJsonResource, textOf } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { failureOf } from "../goose/helpers.js";
import { callTeam, teamConfig, type TeamStatus } from "./helpers.js";

const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };
const GATEWAY = 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }';
const INBOX = "team://t1/inbox";

interface Inbox {
  team_id: string;
  agent_id: string;
  messages: Array<{ from: string; message: string }>;
}

/** What one client session hears, in the order its stream carried it. */
type Event = { log: string } | { updated: string };

let dir: string;
let gaggle: HttpGaggle;
let ann: Client;
let bob: Client;
const heard = new Map<Client, Event[]>();
/** Each person's member of their team t1, by person. */
const members = new Map<string, string>();

const start = () => startHttpGaggle(teamConfig(dir, "", "", GATEWAY), { env: { ...TOKENS, XDG_STATE_HOME: join(dir, "xdg-state") } });
const connect = (name: string, token: string) => gaggle.connect({ name, headers: { authorization: `Bearer ${token}` } });
const call = async (client: Client, tool: string, args: Record<string, unknown>) =>
  (await client.callTool({ name: "execute_child_tool", arguments: { server_id: "team", tool_name: tool, arguments: args } })) as CallToolResult;
const json = async <T>(client: Client, tool: string, args: Record<string, unknown>): Promise<T> => {
  const result = await call(client, tool, args);
  if (result.isError) throw new Error(`${tool} failed: ${textOf(result)}`);
  return JSON.parse(textOf(result)) as T;
};
const status = (client: Client, teamId = "t1") => json<TeamStatus>(client, "gg_team_status", { team_id: teamId });
const logs = (client: Client) => heard.get(client)!.flatMap((event) => ("log" in event ? [event.log] : []));

function record(client: Client): void {
  const events: Event[] = [];
  heard.set(client, events);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => {
    const data = note.params.data as { text?: string } | undefined;
    if (note.params.logger === "team" && data?.text) events.push({ log: data.text });
  });
  // Its members' goslings are its own too, and their updates are not what this counts.
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => {
    if (note.params.uri.startsWith("team://")) events.push({ updated: note.params.uri });
  });
}

/** The owner asks its member to report `text` to the lead, and waits until the owner's session hears of it. */
async function report(owner: Client, person: string, text: string): Promise<void> {
  const reply = callTeam("gg_team_message", { team_id: "t1", recipient_agent_id: "lead", message: text });
  await json(owner, "gg_team_message", { team_id: "t1", recipient_agent_id: members.get(person)!, message: reply });
  await until(
    () => logs(owner),
    (texts) => texts.includes(text),
    15_000,
  );
}

/**
 * The updates a session heard after each notice of its own, given its stream's order: a notice another principal's
 * team caused would add an update where none of its own notices precedes it.
 */
function updatesPerNotice(client: Client): number[] {
  const counts: number[] = [];
  let before = 0;
  for (const event of heard.get(client)!) {
    if ("log" in event) counts.push(0);
    else if (counts.length === 0) before++;
    else counts[counts.length - 1]!++;
  }
  return [before, ...counts];
}

/** A team of ann's saved where team files lay before ids were each principal's own: straight in teams/, its owner inside. */
function writeOldLayoutTeam(): void {
  const teams = join(dir, "state", "team", "teams");
  mkdirSync(teams, { recursive: true, mode: 0o700 });
  const at = "2026-01-01T00:00:00.000Z";
  const member = {
    agent_id: "agent-0ld0ld00",
    title: "Old hand",
    added_by: "lead",
    added_at: at,
    removed_at: at,
    agent: null,
    cwd: dir,
    worktree: null,
    model_preset: null,
    options: [],
    session: null,
    gosling_id: null,
    agent_session_id: null,
    compaction_notices: true,
    tokens: null,
    last_activity_at: at,
  };
  const team = {
    team_id: "legacy",
    owner: "ann",
    lead_agent_id: "lead",
    created_at: at,
    members: [member],
    messages: [
      { message_id: "msg-0ld", kind: "message", from: member.agent_id, to: "lead", scope: "direct", text: "kept from before", image_paths: [], at },
    ],
    deliveries: [
      {
        delivery_id: "dlv-0ld",
        message_id: "msg-0ld",
        to: "lead",
        state: "delivered",
        reason: null,
        created_at: at,
        delivered_at: at,
        read_at: null,
        gosling_id: null,
        agent_session_id: null,
      },
    ],
  };
  writeFileSync(join(teams, "legacy.json"), JSON.stringify(team), { mode: 0o600 });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gaggle-team-ids-"));
  writeOldLayoutTeam();
  gaggle = await start();
  ann = await connect("ann", TOKENS.GAGGLE_TEST_ANN);
  bob = await connect("bob", TOKENS.GAGGLE_TEST_BOB);
  record(ann);
  record(bob);
  for (const [owner, title] of [
    [ann, "ann"],
    [bob, "bob"],
  ] as const) {
    const added = await json<{ agent_id: string; team_created: boolean }>(owner, "gg_team_manage", { team_id: "t1", title, prompt: "[answer hi]" });
    expect(added.team_created).toBe(true);
    members.set(title, added.agent_id);
    await until(
      async () => (await status(owner)).members[0]?.state,
      (state) => state === "idle",
      15_000,
    );
    await owner.subscribeResource({ uri: INBOX });
  }
  // Each report is heard by its owner before the next is sent: on one stream, a notice of the other's would come first.
  await report(ann, "ann", "ann-1");
  await report(bob, "bob", "bob-1");
  await report(ann, "ann", "ann-2");
  await report(bob, "bob", "bob-2");
}, 120_000);
afterAll(() => gaggle?.stop());

describe("team ids are each principal's own", () => {
  it("gives two people a team t1 each, with only their own members", async () => {
    const [annTeam, bobTeam] = [await status(ann), await status(bob)];
    expect(annTeam.members.map((row) => [row.agent_id, row.title])).toEqual([[members.get("ann"), "ann"]]);
    expect(bobTeam.members.map((row) => [row.agent_id, row.title])).toEqual([[members.get("bob"), "bob"]]);
    expect(members.get("ann")).not.toEqual(members.get("bob"));
  });

  it("tells each lead of its own members' messages only, as notices and as inbox updates", () => {
    expect(logs(ann)).toEqual(["ann-1", "ann-2"]);
    expect(logs(bob)).toEqual(["bob-1", "bob-2"]);
    for (const client of [ann, bob]) {
      const counts = updatesPerNotice(client);
      expect(counts[0]).toBe(0);
      expect(counts[1]).toBeGreaterThan(0);
      // ann's first notice is followed by bob's first report before her second: its updates would show there.
      expect(counts.slice(1)).toEqual([counts[1], counts[1]]);
      expect(heard.get(client)!.flatMap((event) => ("updated" in event ? [event.updated] : []))).toEqual(
        Array.from({ length: 2 * counts[1]! }, () => INBOX),
      );
    }
  });

  it("reads each caller's own team through the same inbox URI", async () => {
    for (const [client, person] of [
      [ann, "ann"],
      [bob, "bob"],
    ] as const) {
      const inbox = await readJsonResource<Inbox>(client, INBOX);
      expect(inbox).toMatchObject({ team_id: "t1", agent_id: "lead" });
      expect(inbox.messages.map((entry) => [entry.from, entry.message])).toEqual([1, 2].map((n) => [members.get(person), `${person}-${n}`]));
    }
  });

  it("loads a team file of the shared-id layout for its owner alone, into its owner's folder", async () => {
    const inbox = await readJsonResource<Inbox>(ann, "team://legacy/inbox");
    expect(inbox.messages.map((entry) => entry.message)).toEqual(["kept from before"]);
    await expect(bob.readResource({ uri: "team://legacy/inbox" })).rejects.toThrow(/not found/i);
    const refused = failureOf(await call(bob, "gg_team_status", { team_id: "legacy" }));
    expect(refused).toMatchObject({ code: "NOT_FOUND", error: 'no team "legacy"' });
    expect(JSON.stringify(refused)).not.toMatch(/\bann\b/);
    const teams = join(dir, "state", "team", "teams");
    expect(existsSync(join(teams, "legacy.json"))).toBe(false);
    expect(existsSync(join(teams, "ann", "legacy.json"))).toBe(true);
  });

  it("keeps both teams t1, and each inbox, across a restart of gaggle", async () => {
    const teams = join(dir, "state", "team", "teams");
    expect(existsSync(join(teams, "ann", "t1.json"))).toBe(true);
    expect(existsSync(join(teams, "bob", "t1.json"))).toBe(true);
    await gaggle.stop();
    gaggle = await start();
    ann = await connect("ann", TOKENS.GAGGLE_TEST_ANN);
    bob = await connect("bob", TOKENS.GAGGLE_TEST_BOB);
    for (const [client, person] of [
      [ann, "ann"],
      [bob, "bob"],
    ] as const) {
      expect((await status(client)).members.map((row) => row.agent_id)).toEqual([members.get(person)]);
      const inbox = await readJsonResource<Inbox>(client, INBOX);
      expect(inbox.messages.map((entry) => entry.message)).toEqual([`${person}-1`, `${person}-2`]);
    }
    expect((await readJsonResource<Inbox>(ann, "team://legacy/inbox")).messages.map((entry) => entry.message)).toEqual(["kept from before"]);
  });
});

describe('team ids under gateway.visibility = "all"', () => {
  it("lists each id's inbox once, and reads each reader's own team of that id", async () => {
    const wide = mkdtempSync(join(tmpdir(), "gaggle-team-ids-all-"));
    const env = { ...TOKENS, XDG_STATE_HOME: join(wide, "xdg-state") };
    const everyone = await startHttpGaggle(teamConfig(wide, "", "", `${GATEWAY}\nvisibility = "all"`), { env });
    try {
      const [annAll, bobAll] = [
        await everyone.connect({ name: "ann", headers: { authorization: `Bearer ${TOKENS.GAGGLE_TEST_ANN}` } }),
        await everyone.connect({ name: "bob", headers: { authorization: `Bearer ${TOKENS.GAGGLE_TEST_BOB}` } }),
      ];
      const added = new Map<Client, string>();
      for (const client of [annAll, bobAll]) {
        added.set(client, (await json<{ agent_id: string }>(client, "gg_team_manage", { team_id: "t1", prompt: "[answer hi]" })).agent_id);
      }
      for (const client of [annAll, bobAll]) {
        const uris = (await client.listResources()).resources.map((resource) => resource.uri).filter((uri) => uri.startsWith("team://"));
        expect(uris).toEqual([INBOX]);
        expect(await readJsonResource<Inbox>(client, INBOX)).toMatchObject({ team_id: "t1", agent_id: "lead", messages: [] });
        expect((await status(client)).members.map((row) => row.agent_id)).toEqual([added.get(client)]);
      }
    } finally {
      await everyone.stop();
    }
  }, 60_000);
});
