// Remote children behind OAuth: a child nobody signed in to fails with AUTH_REQUIRED and the command to run, without
// gaggle registering or asking for tokens on its own; where sign-ins are kept, and `gaggle auth status | logout`.
import { existsSync, mkdtempSync, renameSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenStore } from "../../../src/children/oauth/token-store.js";
import { runCli } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gaggle.js";
import { startHttpGaggle } from "../../helpers/gaggle-http.js";
import { startListeningFixture, type ListeningFixture } from "../../helpers/listening-fixture.js";
import { NO_BUILT_INS } from "../../helpers/paths.js";

let gate: ListeningFixture;
let url: string;
let config: string;
let env: NodeJS.ProcessEnv;
let state: string;

beforeAll(async () => {
  gate = await startListeningFixture("oauth-gate.mjs");
  url = `http://127.0.0.1:${gate.port}/mcp`;
  state = mkdtempSync(join(tmpdir(), "gaggle-oauth-state-"));
  env = { ...process.env, XDG_STATE_HOME: state };
  config = writeConfig([NO_BUILT_INS, `[mcp_servers.gated]\ntype = "http"\nurl = "${url}"\n`].join("\n"));
});

afterAll(() => {
  gate?.kill();
});

describe("a child behind OAuth that nobody signed in to", () => {
  it("fails a call with AUTH_REQUIRED naming the command to run, and registers nothing and asks for no token", async () => {
    const run = await runCli(["call", "gated", "echo", "{}", "--config", config], { env });
    expect(run.code).toBe(1);
    const failure = JSON.parse(run.stdout) as { code: string; error: string; hint: string };
    expect(failure).toMatchObject({ code: "AUTH_REQUIRED", hint: `run: gaggle auth login --config ${config} gated` });
    expect(failure.error).toContain("gated needs you to sign in");
    // It read the metadata the 401 pointed at, and stopped there: registering and signing in need a person.
    expect(gate.stderr()).toContain("request GET /.well-known/oauth-protected-resource/mcp");
    expect(gate.stderr()).not.toMatch(/\/register|\/token/);
  });
});

describe("a child that needs a sign-in, from a client of a running gateway", () => {
  it("every call says AUTH_REQUIRED (also while the back-off after the failed start lasts), and get_child_status says needs_auth", async () => {
    const gaggle = await startHttpGaggle([NO_BUILT_INS, `[mcp_servers.gated]\ntype = "http"\nurl = "${url}"\n`].join("\n"), {
      env: { XDG_STATE_HOME: state },
    });
    try {
      const client = await gaggle.connect();
      for (let attempt = 0; attempt < 2; attempt++) {
        const result = await client.callTool({ name: "execute_child_tool", arguments: { server_id: "gated", tool_name: "echo", arguments: {} } });
        expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
          code: "AUTH_REQUIRED",
          hint: `run: gaggle auth login --config ${gaggle.config} gated`,
        });
      }
      const status = await client.callTool({ name: "get_child_status", arguments: { server_id: "gated" } });
      expect(JSON.parse((status.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
        status: "needs_auth",
        error: expect.stringContaining("sign in"),
      });
      await client.close();
    } finally {
      await gaggle.stop();
    }
  });
});

describe("gaggle auth", () => {
  it("status says who is signed in and until when; logout forgets the sign-in", async () => {
    expect((await runCli(["auth", "status", "--config", config], { env })).stdout).toBe("gated: not signed in\n");
    const store = new TokenStore(join(state, "gaggle"), "gated", url);
    await store.update((stored) => ({
      ...stored,
      tokens: { access_token: "secret-token", token_type: "Bearer", expires_in: 3600, scope: "mcp:read", saved_at: Date.now() },
    }));
    const signedIn = (await runCli(["auth", "status", "--config", config], { env })).stdout;
    expect(signedIn).toMatch(/^gated: signed in until \d{4}-\d\d-\d\dT[\d:.]+Z; scopes: mcp:read\n$/);
    expect(signedIn).not.toContain("secret-token");

    const out = await runCli(["auth", "logout", "gated", "--config", config], { env });
    expect(out.stdout).toContain("gated: signed out");
    expect(existsSync(store.file)).toBe(false);
  });

  it("refuses a child that is not remote, naming it", async () => {
    const stdio = writeConfig([NO_BUILT_INS, `[mcp_servers.local]\ncommand = "node"\n`].join("\n"));
    const run = await runCli(["auth", "login", "local", "--config", stdio], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("local is a stdio server; sign-in is for servers reached over http or sse");
  });
});

describe("TokenStore", () => {
  it("writes one file per child, mode 0600, and reads nothing back for another URL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-token-store-"));
    const store = new TokenStore(dir, "docs", "https://docs.example/mcp");
    await store.update((stored) => ({ ...stored, codeVerifier: "v" }));
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    expect(await store.read()).toEqual({ resource: "https://docs.example/mcp", codeVerifier: "v" });
    // The same child, pointed elsewhere: what was obtained for the old URL is never offered to the new one.
    expect(await new TokenStore(dir, "docs", "https://evil.example/mcp").read()).toEqual({ resource: "https://evil.example/mcp" });
  });

  it("applies updates asked for at once one after another, across the stores of one file, so none is lost", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-token-store-"));
    const url = "https://docs.example/mcp";
    const [provider, signIn] = [new TokenStore(dir, "docs", url), new TokenStore(dir, "docs", url)];
    const scopes = ["a", "b", "c", "d", "e", "f"];
    await Promise.all([
      ...scopes.map((scope, at) =>
        (at % 2 ? provider : signIn).update((stored) => ({ ...stored, scopeWanted: `${stored.scopeWanted ?? ""}${scope}` })),
      ),
      provider.update((stored) => ({ ...stored, codeVerifier: "v" })),
    ]);
    expect(await signIn.read()).toEqual({ resource: url, scopeWanted: "abcdef", codeVerifier: "v" });
    expect(statSync(provider.file).mode & 0o777).toBe(0o600);
    // A removal asked for after an update lands after it.
    await Promise.all([provider.update((stored) => ({ ...stored, codeVerifier: "w" })), signIn.forget()]);
    expect(existsSync(provider.file)).toBe(false);
    expect(await provider.read()).toEqual({ resource: url });
  });

  it("reads the file again once another process replaced it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-token-store-"));
    const url = "https://docs.example/mcp";
    const store = new TokenStore(dir, "docs", url);
    await store.update((stored) => ({ ...stored, codeVerifier: "mine" }));
    expect((await await store.read()).codeVerifier).toBe("mine");
    writeFileSync(`${store.file}.new`, JSON.stringify({ resource: url, codeVerifier: "theirs" }));
    renameSync(`${store.file}.new`, store.file);
    expect((await await store.read()).codeVerifier).toBe("theirs");
  });
});
