// The status document of a gaggle with a token per person, one of whom leads a team: the lead sees what its
// members' own sessions started (processes here), their sessions and their calls, as the tools let it; the other
// person sees none of it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memberPrincipal } from "../../../src/children/child.js";
import { validateConfigText } from "../../../src/config/index.js";
import { createGaggle, type Gaggle } from "../../../src/gateway/gaggle.js";
import { openObservatory, type Observatory } from "../../../src/gateway/observe/observatory.js";
import { AdminRoutes } from "../../../src/transport/admin/admin-routes.js";
import { serveHttp, type HttpGateway } from "../../../src/transport/http-server.js";
import { textOf } from "../../helpers/gaggle.js";
import { waitGone } from "../../helpers/processes.js";
import { connectClient } from "../../helpers/raw-http.js";
import { json, type Status } from "./helpers.js";

const TOKENS = { ann: "ann-token-0123456789", bob: "bob-token-0123456789" };

let gaggle: Gaggle;
let observatory: Observatory;
let http: HttpGateway;
const clients: Client[] = [];

async function connect(url: string, token?: string): Promise<Client> {
  const { client } = await connectClient(url, { name: "client", ...(token && { headers: { authorization: `Bearer ${token}` } }) });
  clients.push(client);
  return client;
}

const statusAs = (who: keyof typeof TOKENS) => json<Status>(http.url.replace(/\/mcp$/, "/api/status"), { authorization: `Bearer ${TOKENS[who]}` });

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-team-status-"));
  const text = `[gateway]\nauth_tokens = { ann = "${TOKENS.ann}", bob = "${TOKENS.bob}" }\n\n[virtual.goose]\nenabled = false\n\n[virtual.team]\nenabled = false\n`;
  const config = validateConfigText(text, join(dir, "children_config.toml"), {});
  observatory = await openObservatory(config, { metrics: false, env: {} });
  gaggle = createGaggle(config, { memberBase: async () => (await listening).localBase, observer: observatory });
  observatory.attach(gaggle);
  const admin = new AdminRoutes(gaggle, observatory, { startedAt: new Date(), configErrors: () => [], configErrorPlaces: () => [] });
  const listening = serveHttp(gaggle, { host: "127.0.0.1", port: 0, tokens: TOKENS, admin });
  http = await listening;
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await http?.close();
  await gaggle?.close();
  await observatory?.close();
});

describe("the status document of a team's lead", () => {
  it("shows the work, sessions and calls of the lead's members, and none of them to another principal", async () => {
    const identity = { teamId: "t1", agentId: "m1" };
    const { url } = await gaggle.members.urlFor(identity, "ann");
    const member = await connect(url);
    // A session counts as a connected client once it has made a request.
    await (await connect(http.url, TOKENS.ann)).listTools();
    await (await connect(http.url, TOKENS.bob)).listTools();
    const run = (await member.callTool({
      name: "execute_child_tool",
      arguments: { server_id: "process", tool_name: "gg_process_run", arguments: { command: "sleep 300", timeout_ms: 0 } },
    })) as CallToolResult;
    const { pid } = JSON.parse(textOf(run)) as { pid: number };
    const owner = memberPrincipal(identity);

    const ann = await statusAs("ann");
    expect(ann.background).toEqual([expect.objectContaining({ kind: "process", id: String(pid), owner, title: "sleep 300" })]);
    expect(ann.clients.map((client) => client.principal).sort()).toEqual(["ann", owner].sort());
    expect(ann.recent_calls).toEqual([expect.objectContaining({ principal: owner, target: "execute_child_tool", child: "process" })]);

    const bob = await statusAs("bob");
    expect(bob.background).toEqual([]);
    expect(bob.clients.map((client) => client.principal)).toEqual(["bob"]);
    expect(bob.recent_calls).toEqual([]);

    await member.callTool({ name: "execute_child_tool", arguments: { server_id: "process", tool_name: "gg_process_kill", arguments: { pid } } });
    expect(await waitGone([pid])).toEqual([]);
  });
});
