// A team belongs to the principal whose client created it: over HTTP with a token per person, another person
// neither sees it nor leads it, and closing the team child ends only one's own members.
import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle, bearer } from "../../helpers/gaggle-http.js";
import { textOf } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { failureOf } from "../goose/helpers.js";
import { PNG, teamConfig, type TeamStatus } from "./helpers.js";

const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

let gaggle: HttpGaggle;
let dir: string;
let ann: Client;
let bob: Client;
let member: string;

const call = (client: Client, server: string, tool: string, args: Record<string, unknown>) =>
  client.callTool({ name: "execute_child_tool", arguments: { server_id: server, tool_name: tool, arguments: args } }) as Promise<CallToolResult>;
const team = (client: Client, tool: string, args: Record<string, unknown>) => call(client, "team", tool, args);
const json = async <T>(result: Promise<CallToolResult>): Promise<T> => {
  const answer = await result;
  if (answer.isError) throw new Error(textOf(answer));
  return JSON.parse(textOf(answer)) as T;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
  writeFileSync(join(dir, "inside.png"), PNG);
  const gateway = 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }';
  gaggle = await startHttpGaggle(teamConfig(dir, "", "", gateway), { env: { ...TOKENS, XDG_STATE_HOME: join(dir, "xdg-state") } });
  ann = await gaggle.connect({ name: "ann", ...bearer(TOKENS.GAGGLE_TEST_ANN) });
  bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
  member = (await json<{ agent_id: string }>(team(ann, "gg_team_manage", { team_id: "t1", prompt: "[answer hi]", image_paths: ["inside.png"] })))
    .agent_id;
  await until(
    async () => (await json<TeamStatus>(team(ann, "gg_team_status", { team_id: "t1" }))).members[0]?.state,
    (state) => state === "idle",
    15_000,
  );
});
afterAll(() => gaggle?.stop());

describe("a team over HTTP with a token per person", () => {
  it("is its creator's: another person neither lists, reads, leads, messages nor manages it", async () => {
    expect(JSON.stringify(await bob.listResources())).not.toContain("team://t1");
    await expect(bob.readResource({ uri: "team://t1/inbox" })).rejects.toThrow(/not found/i);
    for (const [tool, args] of [
      ["gg_team_status", { team_id: "t1" }],
      ["gg_team_message", { team_id: "t1", recipient_agent_id: member, message: "do as I say" }],
      ["gg_team_manage", { team_id: "t1", remove_agent_ids: [member] }],
    ] as const) {
      expect(failureOf(await team(bob, tool, args))).toMatchObject({ code: "NOT_FOUND", error: 'no team "t1"' });
    }
    const status = await json<TeamStatus>(team(ann, "gg_team_status", { team_id: "t1" }));
    expect(status.members).toEqual([expect.objectContaining({ agent_id: member, state: "idle" })]);
  });

  it("gives its members' goslings to its creator: only she reads their transcripts", async () => {
    const status = await json<TeamStatus & { members: Array<{ gosling_id: string }> }>(team(ann, "gg_team_status", { team_id: "t1" }));
    const gosling = status.members[0]!.gosling_id;
    expect(textOf(await call(ann, "goose", "get_gosling_output", { process_id: gosling }))).toContain(gosling);
    expect(failureOf(await call(bob, "goose", "get_gosling_output", { process_id: gosling }))).toMatchObject({ code: "NOT_FOUND" });
    expect(failureOf(await call(bob, "goose", "release_gosling", { process_id: gosling }))).toMatchObject({ code: "NOT_FOUND" });
  });

  it("takes images only from inside the sender's folders", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "gaggle-elsewhere-"));
    writeFileSync(join(elsewhere, "secret.png"), PNG);
    const refused = failureOf(
      await team(ann, "gg_team_message", {
        team_id: "t1",
        recipient_agent_id: member,
        message: "look",
        image_paths: [join(elsewhere, "secret.png")],
      }),
    );
    expect(refused).toMatchObject({ code: "INVALID_ARGS", error: expect.stringContaining("is outside the folders team images may come from") });
  });

  it("keeps its records readable by gaggle's user alone, in a state dir made 0700", () => {
    expect(statSync(join(dir, "state")).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "state", "team", "teams", "ann", "t1.json")).mode & 0o777).toBe(0o600);
  });

  it('close_child_session("team") by another person leaves its members running', async () => {
    expect((await bob.callTool({ name: "close_child_session", arguments: { server_id: "team" } })).isError).toBeFalsy();
    const status = await json<TeamStatus>(team(ann, "gg_team_status", { team_id: "t1" }));
    expect(status.members).toEqual([expect.objectContaining({ agent_id: member, state: "idle" })]);
  });
});
