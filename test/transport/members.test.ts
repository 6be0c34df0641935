// Member URLs: sessions opened with a member's secret act as that member, and only that secret does so.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { connectClient, httpTransportOf } from "../helpers/raw-http.js";
import { validateConfigText } from "../../src/config/index.js";
import { createGaggle, type Gaggle } from "../../src/gateway/gaggle.js";
import { memberPrincipal } from "../../src/children/child.js";
import { serveHttp, type HttpGateway } from "../../src/transport/http-server.js";
import { createGaggleWithListener } from "../../src/transport/members-listener.js";
import { until } from "../helpers/poll.js";
import { NO_BUILT_INS } from "../helpers/paths.js";

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close().catch(() => {});
});

/** A gaggle whose members connect to `base`, by default a members-only listener of their own, as when serving stdio. */
function gaggleFor(text = NO_BUILT_INS, base?: () => Promise<string>): Gaggle {
  const config = validateConfigText(text, join(mkdtempSync(join(tmpdir(), "gaggle-members-")), "children_config.toml"), {});
  if (base) {
    const gaggle = createGaggle(config, { memberBase: base });
    open.push(gaggle);
    return gaggle;
  }
  const { gaggle, members } = createGaggleWithListener(config);
  open.push(members, gaggle);
  return gaggle;
}

async function connect(url: string): Promise<Client> {
  const { client } = await connectClient(url, { name: "member" });
  open.push(client);
  return client;
}

const statusOf = async (url: string, init: RequestInit = {}) => (await fetch(url, init)).status;

describe("member URLs", () => {
  it("serving stdio only, gaggle opens a loopback listener for its members, and their sessions carry the identity", async () => {
    const gaggle = gaggleFor();
    const { url } = await gaggle.members.urlFor({ teamId: "t1", agentId: "a1" }, "local");
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/members\/[A-Za-z0-9_-]{32}\/mcp$/);
    const client = await connect(url);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("execute_child_tool");
    expect(gaggle.hub.clients().map((entry) => entry.identity)).toEqual([{ teamId: "t1", agentId: "a1" }]);
    // That listener is for members only.
    expect(await statusOf(new URL("/mcp", url).href, { method: "POST", body: "{}", headers: { "content-type": "application/json" } })).toBe(404);
  });

  it("refuses an unknown or revoked secret, and never lets a member session be used from another path", async () => {
    const gaggle = gaggleFor();
    const member = await gaggle.members.urlFor({ teamId: "t1", agentId: "a1" }, "local");
    const other = await gaggle.members.urlFor({ teamId: "t1", agentId: "a2" }, "local");
    const client = await connect(member.url);
    const sessionId = httpTransportOf(client).sessionId!;
    const forged = await fetch(other.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": sessionId },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(forged.status).toBe(404);
    expect(await statusOf(member.url.replace(/members\/[^/]+/, "members/AAAAAAAAAAAAAAAAAAAAAAAA"), { method: "POST", body: "{}" })).toBe(401);
    member.revoke();
    await expect(connect(member.url)).rejects.toThrow();
  });

  it("when gaggle serves HTTP, members connect to that listener with their secret instead of the bearer token", async () => {
    const gaggle = gaggleFor(`[gateway]\nauth_token = "lead-token-0123456789"\n${NO_BUILT_INS}`, async () => (await listening).localBase);
    const listening = serveHttp(gaggle, { host: "127.0.0.1", port: 0, tokens: { auth_token: "lead-token-0123456789" } });
    const http: HttpGateway = await listening;
    open.push(http);
    const { url } = await gaggle.members.urlFor({ teamId: "t9", agentId: "m1" }, "auth_token");
    expect(new URL(url).port).toBe(String(http.port));
    // A session counts as a connected client once it makes a request after initialize.
    await (await connect(url)).listTools();
    await until(
      () => gaggle.hub.clients(),
      (clients) => clients.length === 1,
    );
    expect(gaggle.hub.clients()[0]!.identity).toEqual({ teamId: "t9", agentId: "m1" });
    // The lead's endpoint still wants the token.
    expect(await statusOf(http.url, { method: "POST", body: "{}", headers: { "content-type": "application/json" } })).toBe(401);
  });

  it("lets a member in while the person whose team it works in is let in, through members that lead teams of their own", async () => {
    const tokens = { alice: "alice-token-0123456789", bob: "bob-token-0123456789" };
    const gaggle = gaggleFor(NO_BUILT_INS, async () => (await listening).localBase);
    const listening = serveHttp(gaggle, { host: "127.0.0.1", port: 0, tokens });
    const http: HttpGateway = await listening;
    open.push(http);
    const lead = { teamId: "t1", agentId: "a1" };
    const alices = await gaggle.members.urlFor(lead, "alice");
    // a1 leads a team of its own, whose member works for alice too.
    const nested = await gaggle.members.urlFor({ teamId: "t2", agentId: "a2" }, memberPrincipal(lead));
    const bobs = await gaggle.members.urlFor({ teamId: "t3", agentId: "b1" }, "bob");
    const session = await connect(nested.url);
    await session.listTools();

    expect(http.useTokens({ bob: tokens.bob })).toBeUndefined();
    for (const url of [alices.url, nested.url]) await expect(connect(url)).rejects.toThrow(/unknown or revoked member credential/);
    await expect(session.listTools()).rejects.toThrow();
    await (await connect(bobs.url)).listTools();

    expect(http.useTokens(tokens)).toBeUndefined();
    await (await connect(nested.url)).listTools();
  });
});
