// Two gaggle processes sharing one sign-in (two `gaggle call` one-shots over one state dir), against a real
// authorization server (oidc-provider, which rotates the refresh tokens of a public client and revokes the grant when
// a used one comes back): when both find the access token due at once, one refreshes and the other takes what it
// saved, under the lock beside the token file. A lock whose holder is gone, or that is older than any refresh takes,
// is taken over.
// The race is made at a gate: the authorization server holds the first refresh until the second process has either
// sent its own refresh or said it waits for the first.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { access, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STALE_MS } from "../../../src/children/oauth/refresh-lock.js";
import { TokenStore } from "../../../src/children/oauth/token-store.js";
import { loginInShell, startAuthServer, type AuthServer } from "../../helpers/auth-server.js";
import { runCli, type CliRun } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { startListeningFixture, type ListeningFixture } from "../../helpers/listening-fixture.js";
import { CLI, NO_BUILT_INS } from "../../helpers/paths.js";

let as: AuthServer;
let resource: ListeningFixture;
let url: string;
let state: string;
let env: NodeJS.ProcessEnv;
let config: string;
let store: TokenStore;
/** The refresh_token grants the authorization server's token endpoint answered, and how. */
const refreshes: string[] = [];
/** What each request to the token endpoint waits for before the server reads it. */
let beforeToken: () => Promise<void> = () => Promise.resolve();

beforeAll(async () => {
  as = await startAuthServer({ beforeToken: () => beforeToken() });
  as.provider.on("grant.success", (ctx) => ctx.oidc.params?.grant_type === "refresh_token" && refreshes.push("granted"));
  as.provider.on("grant.error", (ctx, error) => ctx.oidc.params?.grant_type === "refresh_token" && refreshes.push(error.message));
  resource = await startListeningFixture("oauth-protected.mjs", ["--issuer", as.issuer]);
  url = `http://127.0.0.1:${resource.port}/mcp`;
  state = mkdtempSync(join(tmpdir(), "gaggle-refresh-processes-"));
  env = { ...process.env, XDG_STATE_HOME: state };
  config = writeConfig([NO_BUILT_INS, `[mcp_servers.docs]\ntype = "http"\nurl = "${url}"\n`].join("\n"));
  store = new TokenStore(join(state, "gaggle"), "docs", url);
  // gaggle auth login, with the person at the browser played by `browse`.
  expect(await loginInShell(config, "docs", state, as.issuer)).toBe(0);
});

afterAll(async () => {
  resource?.kill();
  await as?.close();
});

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

const WAITS = "another refresh of this sign-in is under way";

/** `gaggle call docs echo`, logging at info; `says` settles once its stderr has shown `text`. */
function echo(text: string): { run: Promise<CliRun>; says: (line: string) => Promise<void> } {
  const child = spawn(process.execPath, [CLI, "call", "docs", "echo", JSON.stringify({ text }), "--config", config, "--log-level", "info"], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const heard = new Map<string, Signal>();
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
    for (const [line, heardIt] of heard) if (stderr.includes(line)) heardIt.resolve();
  });
  const run = new Promise<CliRun>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  const says = (line: string) => {
    const heardIt = heard.get(line) ?? signal();
    heard.set(line, heardIt);
    if (stderr.includes(line)) heardIt.resolve();
    return heardIt.promise;
  };
  return { run, says };
}

/** The access token stored is due: saved long enough ago that it expires within the minute. */
async function makeDue(): Promise<void> {
  await store.update((stored) => ({ ...stored, tokens: { ...stored.tokens!, saved_at: Date.now() - (stored.tokens!.expires_in! - 30) * 1000 } }));
}

/** The jti of each access token the child accepted a tool call with since `from` (a length of its stderr). */
const acceptedSince = (from: number) =>
  [
    ...resource
      .stderr()
      .slice(from)
      .matchAll(/\(call echo\): token accepted \(jti (\S+)\)/g),
  ].map((match) => match[1]);
const jtiOf = (token: string) => (JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as { jti: string }).jti;

describe("two gaggle processes whose shared access token is due at once", () => {
  it("refresh once between them, both calls go through with the newest token, and the grant lasts", async () => {
    await makeDue();
    const [grantsBefore, logBefore] = [refreshes.length, resource.stderr().length];
    const arrived = [signal(), signal()];
    const open = signal();
    let arrivals = 0;
    beforeToken = async () => {
      arrived[arrivals++]?.resolve();
      await open.promise;
    };

    const a = echo("a");
    await arrived[0]!.promise;
    const b = echo("b");
    // B either refreshes beside A (the grant is lost) or waits for A's refresh; either way A goes on then.
    await Promise.race([arrived[1]!.promise, b.says(WAITS)]);
    beforeToken = () => Promise.resolve();
    open.resolve();
    const [ranA, ranB] = await Promise.all([a.run, b.run]);

    expect(refreshes.slice(grantsBefore)).toEqual(["granted"]);
    expect([ranA.code, ranA.stdout.trim(), ranB.code, ranB.stdout.trim()]).toEqual([0, "a", 0, "b"]);
    const newest = jtiOf((await store.read()).tokens!.access_token);
    // The child's log of a call may come after its answer.
    expect(
      await until(
        () => acceptedSince(logBefore),
        (accepted) => accepted.length >= 2,
      ),
    ).toEqual([newest, newest]);
    await expect(access(`${store.file}.lock`)).rejects.toThrow(/ENOENT/);

    // The grant was not revoked: its refresh token still serves.
    await makeDue();
    const c = await runCli(["call", "docs", "echo", JSON.stringify({ text: "c" }), "--config", config], { env });
    expect([c.code, c.stdout.trim()]).toEqual([0, "c"]);
    expect(refreshes.slice(grantsBefore)).toEqual(["granted", "granted"]);
  });
});

describe("a refresh lock left behind", () => {
  /** A process that has ended, and whose pid is free. */
  const deadPid = async () => {
    const ended = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => ended.once("close", resolve));
    return ended.pid!;
  };

  it.each([
    ["whose holder is gone", async () => ({ pid: await deadPid(), since: Date.now() })],
    ["older than any refresh takes, though its holder lives", () => Promise.resolve({ pid: process.pid, since: Date.now() - STALE_MS - 1000 })],
  ])("is taken over when it is a lock %s", async (_, holder) => {
    await writeFile(`${store.file}.lock`, JSON.stringify({ ...(await holder()), nonce: "left behind" }), { mode: 0o600 });
    await makeDue();
    const grantsBefore = refreshes.length;

    const ran = await runCli(["call", "docs", "echo", JSON.stringify({ text: "d" }), "--config", config], { env });

    expect([ran.code, ran.stdout.trim()]).toEqual([0, "d"]);
    expect(refreshes.slice(grantsBefore)).toEqual(["granted"]);
    await expect(access(`${store.file}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it("held by a live process that took it just now, is waited for", async () => {
    await writeFile(`${store.file}.lock`, JSON.stringify({ pid: process.pid, since: Date.now(), nonce: "held" }), { mode: 0o600 });
    await makeDue();
    const grantsBefore = refreshes.length;

    const call = echo("e");
    await call.says(WAITS);
    expect(refreshes.slice(grantsBefore)).toEqual([]);
    await rm(`${store.file}.lock`);
    const ran = await call.run;

    expect([ran.code, ran.stdout.trim()]).toEqual([0, "e"]);
    expect(refreshes.slice(grantsBefore)).toEqual(["granted"]);
  });
});
