// The bearer tokens in force follow the config file: an edit that revokes a token shuts it out at its next request
// and ends the streams it holds open, one that adds a token lets it in, and a listener off loopback never ends up without one.
import { writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { openEventStream, openListenStream, type EventStream } from "../helpers/event-stream.js";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { modernRequest } from "../helpers/modern-http.js";
import { INITIALIZE, postMcp, rawRequest } from "../helpers/raw-http.js";

const ALICE = "alice-token-6Hq2wX8pVn";
const BOB = "bob-token-9Lm4kT1zRc";
const CAROL = "carol-token-2Fs7jD5yQe";
const echo = fixtureChild("echo", "echo.mjs");

const gaggles: HttpGaggle[] = [];
/** What closes each stream a test holds open, from the client's end. */
const closers: Array<() => void> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  await Promise.allSettled(gaggles.splice(0).map((gaggle) => gaggle.stop()));
});

async function start(config: string, listen?: string): Promise<HttpGaggle> {
  const gaggle = await startHttpGaggle(config, { ...(listen && { listen }) });
  gaggles.push(gaggle);
  return gaggle;
}

function tokens(named: Record<string, string>): string {
  const lines = Object.entries(named).map(([name, token]) => `${name} = "${token}"`);
  return `[gateway.auth_tokens]\n${lines.join("\n")}\n`;
}

/** The port of the admin listener a gaggle with `gateway.admin` serves. */
function adminPortOf(gaggle: HttpGaggle): number {
  return Number(/status page at http:\/\/127\.0\.0\.1:(\d+)\//.exec(gaggle.stderr())![1]);
}

/** The children a status stream's events named, latest last. */
function childrenHeard(stream: EventStream): string[][] {
  return stream.events
    .filter((event) => event.event === "status")
    .map((event) => (JSON.parse(event.data) as { children: Array<{ server_id: string }> }).children.map((child) => child.server_id));
}

/** The JSON-RPC methods a listen stream carried. */
function methodsHeard(stream: EventStream): string[] {
  return stream.events.filter((event) => event.data !== "").map((event) => (JSON.parse(event.data) as { method?: string }).method ?? "");
}

/** The status of an initialize sent with `token` (none: no Authorization header). */
async function initializeStatus(gaggle: HttpGaggle, token?: string): Promise<number> {
  const response = await postMcp(gaggle.port, INITIALIZE, token === undefined ? {} : { authorization: `Bearer ${token}` });
  return response.status;
}

describe("bearer tokens after a config edit", () => {
  it("refuse a removed token at its next request, in its open session too, and keep taking the other", async () => {
    const gaggle = await start([NO_BUILT_INS, tokens({ alice: ALICE, bob: BOB }), echo].join("\n"));
    const alice = await gaggle.connect({ headers: { authorization: `Bearer ${ALICE}` } });
    const bob = await gaggle.connect({ headers: { authorization: `Bearer ${BOB}` } });
    expect((await alice.listTools()).tools.length).toBeGreaterThan(0);

    writeFileSync(gaggle.config, [NO_BUILT_INS, tokens({ bob: BOB }), echo].join("\n"));
    await until(
      () => initializeStatus(gaggle, ALICE),
      (status) => status === 401,
    );
    await expect(alice.listTools()).rejects.toThrow(/missing or wrong bearer token/);
    expect((await bob.listTools()).tools.length).toBeGreaterThan(0);
    expect(await initializeStatus(gaggle, BOB)).toBe(200);
    expect(await initializeStatus(gaggle)).toBe(401);
  });

  it("let an added token in", async () => {
    const gaggle = await start([NO_BUILT_INS, tokens({ alice: ALICE }), echo].join("\n"));
    expect(await initializeStatus(gaggle, CAROL)).toBe(401);

    writeFileSync(gaggle.config, [NO_BUILT_INS, tokens({ alice: ALICE, carol: CAROL }), echo].join("\n"));
    await until(
      () => initializeStatus(gaggle, CAROL),
      (status) => status === 200,
    );
    const carol = await gaggle.connect({ headers: { authorization: `Bearer ${CAROL}` } });
    expect((await carol.listTools()).tools.length).toBeGreaterThan(0);
    expect(await initializeStatus(gaggle, ALICE)).toBe(200);
  });

  it("are required once a config that did not load at start is fixed, and its children are served behind them", async () => {
    const gaggle = await start([NO_BUILT_INS, echo, "[mcp_servers.broken]\ncommand = 7\n"].join("\n"));
    expect(await initializeStatus(gaggle)).toBe(200);

    writeFileSync(gaggle.config, [NO_BUILT_INS, tokens({ alice: ALICE }), echo].join("\n"));
    await until(
      () => initializeStatus(gaggle),
      (status) => status === 401,
    );
    const alice = await gaggle.connect({ headers: { authorization: `Bearer ${ALICE}` } });
    const listed = await alice.callTool({ name: "list_registered_children", arguments: {} });
    expect(JSON.stringify(listed.content)).toContain("echo");
  });

  it("stay in force on a listener off loopback when the edit would leave it none, and the config errors say why", async () => {
    const gaggle = await start([NO_BUILT_INS, tokens({ alice: ALICE }), echo].join("\n"), "0.0.0.0:0");

    writeFileSync(gaggle.config, [NO_BUILT_INS, echo, fixtureChild("marker", "echo.mjs")].join("\n"));
    await until(
      () => gaggle.stderr(),
      (stderr) => stderr.includes("gateway.auth_tokens is not applied"),
    );
    expect(await initializeStatus(gaggle)).toBe(401);
    expect(await initializeStatus(gaggle, ALICE)).toBe(200);
    const ready = await rawRequest(gaggle.port, { path: "/readyz" });
    expect(JSON.parse(ready.body)).toMatchObject({ status: "not_ready", config_errors_at: ["gateway.auth_tokens"] });
    // The rest of the edit is applied.
    const alice = await gaggle.connect({ headers: { authorization: `Bearer ${ALICE}` } });
    const listed = await alice.callTool({ name: "list_registered_children", arguments: {} });
    expect(JSON.stringify(listed.content)).toContain("marker");
  });

  it("are followed by the admin listener too", async () => {
    const gateway = '[gateway]\nadmin = "127.0.0.1:0"\n';
    const gaggle = await start([gateway, NO_BUILT_INS, tokens({ alice: ALICE, bob: BOB }), echo].join("\n"));
    const adminPort = adminPortOf(gaggle);
    const status = async (token: string) =>
      (await rawRequest(adminPort, { path: "/api/status", headers: { authorization: `Bearer ${token}` } })).status;
    expect(await status(ALICE)).toBe(200);

    writeFileSync(gaggle.config, [gateway, NO_BUILT_INS, tokens({ bob: BOB }), echo].join("\n"));
    await until(
      () => status(ALICE),
      (code) => code === 401,
    );
    expect(await status(BOB)).toBe(200);
  });

  it("end the streams a removed token holds open, and keep the other token's open and delivering", async () => {
    const gateway = '[gateway]\nadmin = "127.0.0.1:0"\n';
    const config = (named: Record<string, string>, ...children: string[]) => [gateway, NO_BUILT_INS, tokens(named), echo, ...children].join("\n");
    const gaggle = await start(config({ alice: ALICE, bob: BOB }));
    const adminPort = adminPortOf(gaggle);
    // Each token holds a session's listen stream, a 2026-07-28 subscriptions/listen, and the status stream beside
    // /mcp and on the admin listener.
    const open = async (token: string) => {
      const headers = { authorization: `Bearer ${token}` };
      const held = {
        listen: await openListenStream(gaggle.port, headers),
        modern: await modernRequest(gaggle.port, {
          id: "listen",
          method: "subscriptions/listen",
          params: { notifications: { toolsListChanged: true } },
          headers,
        }),
        status: await openEventStream(gaggle.port, "/api/events", headers),
        admin: await openEventStream(adminPort, "/api/events", headers),
      };
      closers.push(() => held.modern.abort(), ...[held.listen, held.status, held.admin].map((stream) => () => stream.close()));
      expect([held.modern.status, held.status.status, held.admin.status]).toEqual([200, 200, 200]);
      await held.modern.waitFor(1);
      return held;
    };
    const alice = await open(ALICE);
    const bob = await open(BOB);
    await until(
      () => [alice.status, alice.admin, bob.status, bob.admin].map((stream) => childrenHeard(stream).length),
      (counts) => counts.every((count) => count > 0),
    );

    writeFileSync(gaggle.config, config({ bob: BOB }, fixtureChild("marker", "echo.mjs")));
    await until(
      () => [alice.listen.closed(), alice.modern.message.complete, alice.status.closed(), alice.admin.closed()],
      (closed) => closed.every(Boolean),
    );
    // The subscription ends gracefully, with its result.
    expect((await alice.modern.all()).at(-1)).toMatchObject({ id: "listen", result: {} });
    // Alice's token is gone by now: what bob's streams carry from here on came after it was taken away.
    const listChanged = "notifications/tools/list_changed";
    const listChanges = () => [
      methodsHeard(bob.listen).filter((method) => method === listChanged).length,
      bob.modern.frames.filter((frame) => frame.method === listChanged).length,
    ];
    const before = listChanges();
    writeFileSync(gaggle.config, config({ bob: BOB }, fixtureChild("marker", "echo.mjs"), fixtureChild("later", "echo.mjs")));
    await until(listChanges, (counts) => counts.every((count, at) => count > before[at]!));
    await until(
      () => [bob.status, bob.admin].map((stream) => childrenHeard(stream).at(-1) ?? []),
      (latest) => latest.every((children) => children.includes("later")),
    );
    expect([bob.listen.closed(), bob.modern.message.complete, bob.status.closed(), bob.admin.closed()]).toEqual([false, false, false, false]);
  });
});
