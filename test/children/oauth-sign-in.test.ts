// Signing in to a remote child behind a real authorization server (oidc-provider): gaggle auth login through the
// browser, then calls with the token; refresh when the access token is refused; back to AUTH_REQUIRED when the
// refresh token is too; the redirect listener's state check; the client credentials grant for unattended use.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenStore } from "../../src/children/oauth/token-store.js";
import { browse, startAuthServer, type AuthServer } from "../helpers/auth-server.js";
import { runCli } from "../helpers/cli.js";
import { writeConfig } from "../helpers/gaggle.js";
import { startListeningFixture, type ListeningFixture } from "../helpers/listening-fixture.js";
import { CLI, NO_BUILT_INS } from "../helpers/paths.js";

const ROBOT = {
  client_id: "robot",
  client_secret: "robot-secret",
  grant_types: ["client_credentials"],
  redirect_uris: [],
  response_types: [],
  scope: "mcp:read mcp:write",
};

let as: AuthServer;
let resource: ListeningFixture;
let url: string;
let state: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  as = await startAuthServer({ clients: [ROBOT] });
  resource = await startListeningFixture("oauth-protected.mjs", ["--issuer", as.issuer]);
  url = `http://127.0.0.1:${resource.port}/mcp`;
  state = mkdtempSync(join(tmpdir(), "gaggle-sign-in-"));
  env = { ...process.env, XDG_STATE_HOME: state };
});

afterAll(async () => {
  resource?.kill();
  await as?.close();
});

const configFor = (name: string, oauth = "") =>
  writeConfig([NO_BUILT_INS, `[mcp_servers.${name}]\ntype = "http"\nurl = "${url}"\n${oauth}`].join("\n"));
const echo = (config: string, name: string, text: string) =>
  runCli(["call", name, "echo", JSON.stringify({ text }), "--config", config, "--log-level", "debug"], { env });
const storeOf = (name: string) => new TokenStore(join(state, "gaggle"), name, url);

/** Runs `gaggle auth login NAME` and plays the person at the browser once it prints the URL. */
async function login(config: string, name: string, beforeBrowsing?: (authorizationUrl: string) => Promise<void>) {
  const child = spawn(process.execPath, [CLI, "auth", "login", name, "--config", config], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  const authorizationUrl = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const match = /^\s+(http\S+)$/m.exec(stdout);
      if (match) resolve(match[1]!);
    });
    void exited.then(() => reject(new Error(`gaggle auth login ended before printing a URL:\n${stdout}${stderr}`)));
  });
  await beforeBrowsing?.(authorizationUrl);
  const landed = await browse(authorizationUrl, as.issuer);
  return { code: await exited, stdout, stderr, landed };
}

describe("a child behind a real authorization server", () => {
  const config = () => configFor("docs");

  it("before sign-in a call fails with AUTH_REQUIRED; after gaggle auth login it goes through", async () => {
    const before = await echo(config(), "docs", "hello");
    expect(JSON.parse(before.stdout)).toMatchObject({ code: "AUTH_REQUIRED", hint: "run: gaggle auth login docs" });

    const signIn = await login(config(), "docs");
    expect(signIn.landed).toMatchObject({ status: 200, landedAt: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/) });
    expect(signIn.code).toBe(0);
    expect(signIn.stdout).toMatch(/docs: signed in; scopes granted: mcp:read/);

    const store = storeOf("docs");
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    const { access_token: token, refresh_token: refresh } = store.read().tokens!;
    expect(refresh).toBeDefined();

    const after = await echo(config(), "docs", "hello");
    expect(after.stdout.trim()).toBe("hello");
    // Not in what gaggle prints, not in its debug logs.
    for (const output of [signIn.stdout, signIn.stderr, after.stdout, after.stderr]) {
      expect(output).not.toContain(token);
      expect(output).not.toContain(refresh);
    }
  });

  it("an access token the server refuses is refreshed, and the call goes through", async () => {
    const store = storeOf("docs");
    store.update((stored) => ({ ...stored, tokens: { ...stored.tokens!, access_token: "refused" } }));
    expect((await echo(config(), "docs", "again")).stdout.trim()).toBe("again");
    expect(store.read().tokens!.access_token).not.toBe("refused");
  });

  it("when the refresh token is refused too, the call fails with AUTH_REQUIRED again", async () => {
    const store = storeOf("docs");
    store.update((stored) => ({ ...stored, tokens: { ...stored.tokens!, access_token: "refused", refresh_token: "revoked" } }));
    expect(JSON.parse((await echo(config(), "docs", "x")).stdout)).toMatchObject({ code: "AUTH_REQUIRED" });
  });

  it("gaggle auth logout revokes the refresh token at the authorization server, then forgets it", async () => {
    expect((await login(config(), "docs")).code).toBe(0);
    const kept = storeOf("docs").read();
    const out = await runCli(["auth", "logout", "docs", "--config", config()], { env });
    expect(out.stdout).toContain("docs: signed out; its refresh token revoked at the authorization server");
    // Put back as they were (the access token aside): the revoked refresh token gets nothing any more.
    storeOf("docs").update(() => ({ ...kept, tokens: { ...kept.tokens!, access_token: "refused" } }));
    expect(JSON.parse((await echo(config(), "docs", "x")).stdout)).toMatchObject({ code: "AUTH_REQUIRED" });
  });

  it("the redirect listener refuses a redirect that does not carry the sign-in's state", async () => {
    const signIn = await login(config(), "docs", async (authorizationUrl) => {
      const redirect = new URL(new URL(authorizationUrl).searchParams.get("redirect_uri")!);
      redirect.search = "?code=forged&state=not-the-one";
      const forged = await fetch(redirect);
      expect(forged.status).toBe(400);
      expect(await forged.text()).toContain("does not carry the state of the sign-in under way");
    });
    expect(signIn.code).toBe(0);
  });
});

describe("the client credentials grant", () => {
  it("gets a token with no person involved, and calls go through", async () => {
    const config = configFor(
      "robot",
      `\n[mcp_servers.robot.oauth]\ngrant = "client_credentials"\nclient_id = "robot"\nclient_secret = "robot-secret"\n`,
    );
    expect((await echo(config, "robot", "unattended")).stdout.trim()).toBe("unattended");
    expect(storeOf("robot").read().tokens?.access_token).toBeDefined();
    expect(readFileSync(storeOf("robot").file, "utf8")).not.toContain("robot-secret");
  });
});
