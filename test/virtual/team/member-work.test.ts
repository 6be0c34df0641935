// What a team member's own session starts (processes, goslings) is its lead's to see and stop, and no one else's:
// over HTTP with a token per person, the lead lists, reads and stops it, and the other person finds none of it. The
// team's other members see it and cannot stop it; a member of another team finds none of it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateConfigText } from "../../../src/config/index.js";
import { createGaggle, type Gaggle } from "../../../src/gateway/gaggle.js";
import { serveHttp, type HttpGateway } from "../../../src/transport/http-server.js";
import { failureOf, textOf } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { waitGone } from "../../helpers/processes.js";
import { connectClient } from "../../helpers/raw-http.js";
import { gooseConfig, idOf } from "../goose/helpers.js";

const TOKENS = { ann: "ann-token-0123456789", bob: "bob-token-0123456789" };

let gaggle: Gaggle;
let http: HttpGateway;
const clients: Client[] = [];

const call = (client: Client, server: string, tool: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name: "execute_child_tool", arguments: { server_id: server, tool_name: tool, arguments: args } }) as Promise<CallToolResult>;
const json = async <T>(result: Promise<CallToolResult>): Promise<T> => {
  const answer = await result;
  if (answer.isError) throw new Error(textOf(answer));
  return JSON.parse(textOf(answer)) as T;
};

async function connect(url: string, token?: string): Promise<Client> {
  const { client } = await connectClient(url, { name: "client", ...(token && { headers: { authorization: `Bearer ${token}` } }) });
  clients.push(client);
  return client;
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-member-work-"));
  const gateway = `auth_tokens = { ann = "${TOKENS.ann}", bob = "${TOKENS.bob}" }`;
  const text = `${gooseConfig(dir, "", gateway)}\n[virtual.team]\nenabled = false\n`;
  const config = validateConfigText(text, join(dir, "children_config.toml"), {});
  const listening = serveHttp((gaggle = createGaggle(config, { memberBase: async () => (await listening).localBase })), {
    host: "127.0.0.1",
    port: 0,
    tokens: TOKENS,
  });
  http = await listening;
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await http?.close();
  await gaggle?.close();
});

describe("the work of a team member's own session", () => {
  it("is seen and stopped by the team's lead, and by no other principal", async () => {
    const { url } = await gaggle.members.urlFor({ teamId: "t1", agentId: "m1" }, "ann");
    const member = await connect(url);
    const ann = await connect(http.url, TOKENS.ann);
    const bob = await connect(http.url, TOKENS.bob);

    const { pid } = await json<{ pid: number }>(call(member, "process", "gg_process_run", { command: "sleep 300", timeout_ms: 0 }));
    const gosling = idOf(textOf(await call(member, "goose", "run_goose", { prompt: "[answer hi]" })));

    const listed = (client: Client) => json<{ processes: Array<{ pid: number }> }>(call(client, "process", "gg_process_status"));
    expect((await listed(ann)).processes.map((entry) => entry.pid)).toContain(pid);
    expect((await listed(bob)).processes.map((entry) => entry.pid)).not.toContain(pid);
    expect(failureOf(await call(bob, "process", "gg_process_status", { pid }))).toMatchObject({ code: "NOT_FOUND" });
    expect(failureOf(await call(bob, "process", "gg_process_kill", { pid }))).toMatchObject({ code: "NOT_FOUND" });
    expect(textOf(await call(ann, "goose", "list_goslings"))).toContain(gosling);
    expect(textOf(await call(bob, "goose", "list_goslings"))).not.toContain(gosling);
    expect(failureOf(await call(bob, "goose", "release_gosling", { process_id: gosling }))).toMatchObject({ code: "NOT_FOUND" });
    await expect(bob.readResource({ uri: `process://${pid}/log` })).rejects.toThrow();

    // Closing a child as the other principal ends none of the member's work.
    await bob.callTool({ name: "close_child_session", arguments: { server_id: "process" } });
    await bob.callTool({ name: "close_child_session", arguments: { server_id: "goose" } });
    expect((await json<{ status: string }>(call(ann, "process", "gg_process_status", { pid }))).status).toBe("running");
    expect(textOf(await call(ann, "goose", "get_gosling_status", { process_id: gosling }))).not.toContain("RELEASED");

    // The lead stops it.
    expect(await json<{ status: string }>(call(ann, "process", "gg_process_kill", { pid }))).toMatchObject({ status: "killed" });
    expect(await waitGone([pid])).toEqual([]);
    expect((await call(ann, "goose", "release_gosling", { process_id: gosling })).isError).toBeFalsy();
    await until(
      () => call(ann, "goose", "get_gosling_status", { process_id: gosling }).then(textOf),
      (status) => status.includes("RELEASED"),
    );
  });

  it("is seen, not stopped, by the team's other members, and not seen by another team's", async () => {
    const [mine, mate, stranger] = await Promise.all([
      gaggle.members.urlFor({ teamId: "t2", agentId: "m1" }, "ann"),
      gaggle.members.urlFor({ teamId: "t2", agentId: "m2" }, "ann"),
      gaggle.members.urlFor({ teamId: "t3", agentId: "m1" }, "ann"),
    ]);
    const member = await connect(mine.url);
    const teammate = await connect(mate.url);
    const outsider = await connect(stranger.url);

    const { pid } = await json<{ pid: number }>(call(member, "process", "gg_process_run", { command: "sleep 300", timeout_ms: 0 }));
    const listed = (client: Client) => json<{ processes: Array<{ pid: number }> }>(call(client, "process", "gg_process_status"));
    expect((await listed(teammate)).processes.map((entry) => entry.pid)).toContain(pid);
    expect(await json<{ status: string }>(call(teammate, "process", "gg_process_status", { pid }))).toMatchObject({ status: "running" });
    expect(failureOf(await call(teammate, "process", "gg_process_kill", { pid }))).toMatchObject({ code: "PERMISSION_DENIED" });
    expect((await listed(outsider)).processes.map((entry) => entry.pid)).not.toContain(pid);
    expect(failureOf(await call(outsider, "process", "gg_process_status", { pid }))).toMatchObject({ code: "NOT_FOUND" });

    expect(await json<{ status: string }>(call(member, "process", "gg_process_kill", { pid }))).toMatchObject({ status: "killed" });
    expect(await waitGone([pid])).toEqual([]);
  });
});
