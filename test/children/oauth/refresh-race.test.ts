// Refreshes racing one another, against a real authorization server (oidc-provider, which rotates the refresh tokens
// of a public client and revokes the grant when a used one comes back): a request that read the tokens before
// another request's refresh replaced them waits for, or takes, that refresh's tokens, and refreshes nothing itself.
// The race is made at a gate: the store holds one request's read (or update) until the other's call has ended.
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChildOAuthProvider } from "../../../src/children/oauth/provider.js";
import { TokenStore, type StoredSignIn } from "../../../src/children/oauth/token-store.js";
import { OutputHold } from "../../../src/children/wire/output-hold.js";
import { remoteTransport } from "../../../src/children/wire/remote-transport.js";
import { loginInShell, startAuthServer, type AuthServer } from "../../helpers/auth-server.js";
import { writeConfig } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { startListeningFixture, type ListeningFixture } from "../../helpers/listening-fixture.js";
import { NO_BUILT_INS } from "../../helpers/paths.js";

let as: AuthServer;
let resource: ListeningFixture;
let url: string;
let state: string;
let config: string;
/** The refresh_token grants the authorization server's token endpoint answered, and how. */
const refreshes: string[] = [];

beforeAll(async () => {
  as = await startAuthServer();
  as.provider.on("grant.success", (ctx) => ctx.oidc.params?.grant_type === "refresh_token" && refreshes.push("granted"));
  as.provider.on("grant.error", (ctx, error) => ctx.oidc.params?.grant_type === "refresh_token" && refreshes.push(error.message));
  resource = await startListeningFixture("oauth-protected.mjs", ["--issuer", as.issuer]);
  url = `http://127.0.0.1:${resource.port}/mcp`;
  state = mkdtempSync(join(tmpdir(), "gaggle-refresh-race-"));
  config = writeConfig([NO_BUILT_INS, `[mcp_servers.docs]\ntype = "http"\nurl = "${url}"\n`].join("\n"));
  // gaggle auth login, with the person at the browser played by `browse`.
  expect(await loginInShell(config, "docs", state, as.issuer)).toBe(0);
});

afterAll(async () => {
  resource?.kill();
  await as?.close();
});

/** A call made inside `held.run` has its store reads (from the `readsBefore + 1`th on) or updates held while `closed`. */
interface Held {
  readsBefore: number;
  holdUpdates: boolean;
  reads: number;
  closed: boolean;
  /** Settles once something of the call is held. */
  reached: Signal;
  open: Signal;
}

/** A promise and what settles it. */
interface Signal {
  promise: Promise<void>;
  resolve: () => void;
}

function signal(): Signal {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}
const held = new AsyncLocalStorage<Held>();

class GatedStore extends TokenStore {
  override async read(): Promise<StoredSignIn> {
    const stored = await super.read();
    const call = held.getStore();
    if (call?.closed && !call.holdUpdates && ++call.reads > call.readsBefore) await this.hold(call);
    return stored;
  }

  override async update(change: (stored: StoredSignIn) => StoredSignIn): Promise<StoredSignIn> {
    const call = held.getStore();
    if (call?.closed && call.holdUpdates) await this.hold(call);
    return super.update(change);
  }

  private async hold(call: Held): Promise<void> {
    call.reached.resolve();
    await call.open.promise;
  }
}

const gate = (options: { readsBefore?: number; holdUpdates?: boolean }): Held => ({
  readsBefore: options.readsBefore ?? 0,
  holdUpdates: options.holdUpdates ?? false,
  reads: 0,
  closed: true,
  reached: signal(),
  open: signal(),
});

/** A session with the child through gaggle's remote transport and the provider of its sign-in. */
async function connect(): Promise<{ client: Client; store: GatedStore }> {
  const store = new GatedStore(join(state, "gaggle"), "docs", url);
  const provider = new ChildOAuthProvider({ name: "docs", configFile: config }, undefined, store);
  const hold = new OutputHold({ held: () => false, onHold: () => {} });
  const transport = remoteTransport("http", url, { headers: {}, toolFor: () => undefined, authProvider: provider, hold });
  const client = new Client({ name: "refresh-race", version: "1.0.0" });
  await client.connect(transport);
  return { client, store };
}

const echo = async (client: Client, text: string) =>
  ((await client.callTool({ name: "echo", arguments: { text } })).content as Array<{ text: string }>)[0]!.text;

/** The jti of each access token the child accepted a tool call with since `from` (a length of its stderr). */
const acceptedSince = (from: number) =>
  [
    ...resource
      .stderr()
      .slice(from)
      .matchAll(/\(call echo\): token accepted \(jti (\S+)\)/g),
  ].map((match) => match[1]);
const jtiOf = (token: string) => (JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as { jti: string }).jti;

describe("two requests racing to refresh one sign-in", () => {
  it("a request that read an access token about to expire before another's refresh replaced it takes that refresh's token, and refreshes nothing", async () => {
    const { client, store } = await connect();
    const { expires_in: lifetime } = (await store.read()).tokens!;
    await store.update((stored) => ({ ...stored, tokens: { ...stored.tokens!, saved_at: Date.now() - (lifetime! - 30) * 1000 } }));
    const [grantsBefore, logBefore] = [refreshes.length, resource.stderr().length];

    // A's first read is the SDK's, for the request's header; the second, whether the token is due, is held.
    const a = gate({ readsBefore: 1 });
    const first = held.run(a, () => echo(client, "a"));
    await a.reached.promise;
    expect(await echo(client, "b")).toBe("b");
    a.closed = false;
    a.open.resolve();
    expect(await first).toBe("a");

    expect(refreshes.slice(grantsBefore)).toEqual(["granted"]);
    const newest = jtiOf((await store.read()).tokens!.access_token);
    // The child's log of a call may come after its answer.
    expect(
      await until(
        () => acceptedSince(logBefore),
        (accepted) => accepted.length >= 2,
      ),
    ).toEqual([newest, newest]);
    await client.close();
  });

  it("requests the child refused with one access token get one refresh between them, and the sign-in lasts", async () => {
    const { client, store } = await connect();
    await store.update((stored) => ({ ...stored, tokens: { ...stored.tokens!, access_token: "refused" } }));
    const [grantsBefore, logBefore] = [refreshes.length, resource.stderr().length];

    // A is held at its first change to the store, which notes the child's refusal.
    const a = gate({ holdUpdates: true });
    const first = held.run(a, () => echo(client, "a"));
    await a.reached.promise;
    expect(await echo(client, "b")).toBe("b");
    a.closed = false;
    a.open.resolve();
    expect(await first).toBe("a");

    expect(refreshes.slice(grantsBefore)).toEqual(["granted"]);
    const newest = jtiOf((await store.read()).tokens!.access_token);
    // The child's log of a call may come after its answer.
    expect(
      await until(
        () => acceptedSince(logBefore),
        (accepted) => accepted.length >= 2,
      ),
    ).toEqual([newest, newest]);
    // The grant was not revoked: its refresh token still serves.
    await store.update((stored) => ({ ...stored, tokens: { ...stored.tokens!, access_token: "refused" } }));
    expect(await echo(client, "c")).toBe("c");
    expect(refreshes.slice(grantsBefore)).toEqual(["granted", "granted"]);
    await client.close();
  });
});
