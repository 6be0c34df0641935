// Signing in to a remote child behind a real authorization server (oidc-provider): gaggle auth login through the
// browser, then calls with the token; refresh when the access token is refused; back to AUTH_REQUIRED when the
// refresh token is too; the redirect listener's state check; the client credentials grant for unattended use.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenStore } from "../../../src/children/oauth/token-store.js";
import { browse, startAuthServer, type AuthServer } from "../../helpers/auth-server.js";
import { runCli } from "../../helpers/cli.js";
import { until } from "../../helpers/poll.js";
import { writeConfig } from "../../helpers/gaggle.js";
import { startHttpGaggle } from "../../helpers/gaggle-http.js";
import { envelope, modernCall } from "../../helpers/modern-http.js";
import { startListeningFixture, type ListeningFixture } from "../../helpers/listening-fixture.js";
import { CLI, NO_BUILT_INS } from "../../helpers/paths.js";

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

/** A client pre-registered for sign-ins through the browser: it names its one loopback redirect, on a fixed port. */
const DESK = {
  client_id: "desk",
  client_secret: "desk-secret",
  application_type: "native" as const,
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code" as const],
  redirect_uris: [] as string[],
  scope: "mcp:read mcp:write",
};
let deskPort: number;

beforeAll(async () => {
  deskPort = await freePort();
  DESK.redirect_uris = [`http://127.0.0.1:${deskPort}/callback`];
  as = await startAuthServer({ clients: [ROBOT, DESK] });
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
const storeOf = (name: string, at = url) => new TokenStore(join(state, "gaggle"), name, at);

/**
 * Runs `gaggle auth login NAME` and plays the person at the browser once it prints the URL; `beforeBrowsing` (given
 * the URL and the process) may answer "stop" when it has ended the sign-in itself.
 */
async function login(config: string, name: string, beforeBrowsing?: (authorizationUrl: string, signingIn: ChildProcess) => Promise<void | "stop">) {
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
  const landed = (await beforeBrowsing?.(authorizationUrl, child)) === "stop" ? undefined : await browse(authorizationUrl, as.issuer);
  return { code: await exited, stdout, stderr, landed };
}

describe("a child behind a real authorization server", () => {
  const config = () => configFor("docs");

  it("before sign-in a call fails with AUTH_REQUIRED; after gaggle auth login it goes through", async () => {
    const file = config();
    const before = await echo(file, "docs", "hello");
    // The command names the config file: the shell it is run in may find another.
    expect(JSON.parse(before.stdout)).toMatchObject({ code: "AUTH_REQUIRED", hint: `run: gaggle auth login --config ${file} docs` });

    const signIn = await login(config(), "docs");
    expect(signIn.landed).toMatchObject({ status: 200, landedAt: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/) });
    expect(signIn.code).toBe(0);
    expect(signIn.stdout).toMatch(/docs: signed in; scopes granted: mcp:read/);

    const store = storeOf("docs");
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    const { access_token: token, refresh_token: refresh } = (await store.read()).tokens!;
    expect(refresh).toBeDefined();

    const after = await echo(config(), "docs", "hello");
    expect(after.stdout.trim()).toBe("hello");
    // Not in what gaggle prints, not in its debug logs.
    for (const output of [signIn.stdout, signIn.stderr, after.stdout, after.stderr]) {
      expect(output).not.toContain(token);
      expect(output).not.toContain(refresh);
    }
  });

  it("gaggle auth login takes the redirect address pasted by a person whose browser runs on another machine", async () => {
    const config = configFor("pasted");
    const child = spawn(process.execPath, [CLI, "auth", "login", "pasted", "--config", config], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    const { landedAt } = await until(
      async () => {
        const match = /^\s+(http\S+)$/m.exec(stdout);
        return match && stdout.includes("paste here") ? browse(match[1]!, as.issuer, { elsewhere: true }) : undefined;
      },
      (landed) => landed !== undefined,
    ).then((landed) => landed!);
    expect(landedAt).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
    // A line that is not the address is refused, and the wait goes on.
    child.stdin.write("not an address\n");
    await until(
      () => stdout,
      (out) => out.includes("That address was not taken: that is not a URL"),
    );
    child.stdin.write(`${landedAt}\n`);
    expect(await exited).toBe(0);
    expect(stdout).toMatch(/pasted: signed in; scopes granted: mcp:read/);
    expect((await storeOf("pasted").read()).tokens?.access_token).toBeDefined();
  });

  it("an access token the server refuses is refreshed, and the call goes through", async () => {
    const store = storeOf("docs");
    await store.update((stored) => ({ ...stored, tokens: { ...stored.tokens!, access_token: "refused" } }));
    expect((await echo(config(), "docs", "again")).stdout.trim()).toBe("again");
    expect((await store.read()).tokens!.access_token).not.toBe("refused");
  });

  it("an access token about to expire is refreshed before the call goes out, so the server refuses nothing", async () => {
    const store = storeOf("docs");
    const { access_token: before, expires_in: lifetime } = (await store.read()).tokens!;
    // Saved so long ago that it expires within the minute (the server, whose clock is the token's own, still takes it).
    await store.update((stored) => ({ ...stored, tokens: { ...stored.tokens!, saved_at: Date.now() - (lifetime! - 30) * 1000 } }));
    const refusalsBefore = resource.stderr().match(/invalid token/g)?.length ?? 0;
    expect((await echo(config(), "docs", "ahead")).stdout.trim()).toBe("ahead");
    expect((await store.read()).tokens!.access_token).not.toBe(before);
    expect(resource.stderr().match(/invalid token/g)?.length ?? 0).toBe(refusalsBefore);
  });

  it("when the refresh token is refused too, the call fails with AUTH_REQUIRED again", async () => {
    const store = storeOf("docs");
    await store.update((stored) => ({ ...stored, tokens: { ...stored.tokens!, access_token: "refused", refresh_token: "revoked" } }));
    expect(JSON.parse((await echo(config(), "docs", "x")).stdout)).toMatchObject({ code: "AUTH_REQUIRED" });
  });

  it("a gaggle auth login abandoned halfway leaves the sign-in before it working", async () => {
    const config = configFor("kept");
    expect((await login(config, "kept")).code).toBe(0);
    const before = await storeOf("kept").read();
    // Again, and the person gives up at the authorization page: Ctrl-C.
    const again = await login(config, "kept", async (_authorizationUrl, signingIn) => {
      signingIn.kill("SIGINT");
      return "stop";
    });
    expect(again.code).not.toBe(0);
    expect(await storeOf("kept").read()).toMatchObject({ client: before.client, tokens: before.tokens });
    // Refreshed as it would have been: the refresh token still belongs to the client stored.
    await storeOf("kept").update((stored) => ({ ...stored, tokens: { ...stored.tokens!, access_token: "refused" } }));
    expect((await echo(config, "kept", "still")).stdout.trim()).toBe("still");
  });

  it("gaggle auth logout revokes the refresh token at the authorization server, then forgets it", async () => {
    expect((await login(config(), "docs")).code).toBe(0);
    const kept = await storeOf("docs").read();
    const out = await runCli(["auth", "logout", "docs", "--config", config()], { env });
    expect(out.stdout).toContain("docs: signed out; its refresh token revoked at the authorization server");
    // Put back as they were (the access token aside): the revoked refresh token gets nothing any more.
    await storeOf("docs").update(() => ({ ...kept, tokens: { ...kept.tokens!, access_token: "refused" } }));
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

  it("refuses a redirect that names another issuer than the authorization server (RFC 9207), and the sign-in fails", async () => {
    const signIn = await login(config(), "docs", async (authorizationUrl) => {
      const asked = new URL(authorizationUrl).searchParams;
      const redirect = new URL(asked.get("redirect_uri")!);
      redirect.search = new URLSearchParams({ code: "forged", state: asked.get("state")!, iss: "https://evil.example.com" }).toString();
      const forged = await fetch(redirect);
      expect(forged.status).toBe(400);
      expect(await forged.text()).toContain(`the redirect names the issuer https://evil.example.com, not ${as.issuer}`);
      return "stop";
    });
    expect(signIn.code).toBe(1);
    expect(signIn.stderr).toContain("the redirect names the issuer https://evil.example.com");
  });
});

describe("a client pre-registered with the authorization server", () => {
  it("signs in as that client on its redirect port, registers nothing, and keeps its secret out of the token file", async () => {
    const config = configFor("desk", `\n[mcp_servers.desk.oauth]\nclient_id = "desk"\nclient_secret = "desk-secret"\nredirect_port = ${deskPort}\n`);
    const signIn = await login(config, "desk", async (url) => {
      expect(new URL(url).searchParams.get("client_id")).toBe("desk");
      expect(new URL(url).searchParams.get("redirect_uri")).toBe(`http://127.0.0.1:${deskPort}/callback`);
    });
    expect(signIn.code).toBe(0);
    expect(await storeOf("desk").read()).toMatchObject({ tokens: { access_token: expect.any(String) } });
    expect((await storeOf("desk").read()).client).toBeUndefined();
    expect(readFileSync(storeOf("desk").file, "utf8")).not.toContain("desk-secret");
    expect((await echo(config, "desk", "pre-registered")).stdout.trim()).toBe("pre-registered");
  });
});

describe("a running gateway", () => {
  it("uses a sign-in made by another process at once, without waiting out the back-off after its refusal", async () => {
    const source = await login(configFor("source"), "source");
    expect(source.code).toBe(0);
    const gaggle = await startHttpGaggle([NO_BUILT_INS, `[mcp_servers.late]\ntype = "http"\nurl = "${url}"\n`].join("\n"), {
      env: { XDG_STATE_HOME: state },
    });
    try {
      const client = await gaggle.connect();
      const echoLate = async (text: string) => {
        const result = await client.callTool({
          name: "execute_child_tool",
          arguments: { server_id: "late", tool_name: "echo", arguments: { text } },
        });
        return (result.content as Array<{ text: string }>)[0]!.text;
      };
      expect(JSON.parse(await echoLate("before"))).toMatchObject({
        code: "AUTH_REQUIRED",
        hint: `run: gaggle auth login --config ${gaggle.config} late`,
      });
      // What `gaggle auth login late` would write, written within the back-off's first second.
      const source = await await storeOf("source").read();
      await storeOf("late").update(() => source);
      expect(await echoLate("after")).toBe("after");
      // The tokens in use appear in no status and no resource.
      const { access_token: token, refresh_token: refresh } = (await storeOf("late").read()).tokens!;
      const status = await client.callTool({ name: "get_child_status", arguments: { server_id: "late" } });
      const shown = [JSON.stringify(status)];
      for (const uri of ["mcp://server_summary", "mcp://children_servers"]) shown.push(JSON.stringify(await client.readResource({ uri })));
      for (const text of [...shown, gaggle.stderr()]) {
        expect(text).not.toContain(token);
        expect(text).not.toContain(refresh);
      }
      await client.close();
    } finally {
      await gaggle.stop();
    }
  });
});

describe("a client that can open URLs (URL-mode elicitation)", () => {
  const gatewayFor = (name: string) =>
    startHttpGaggle([NO_BUILT_INS, `[mcp_servers.${name}]\ntype = "http"\nurl = "${url}"\n`].join("\n"), { env: { XDG_STATE_HOME: state } });
  const capabilities = { capabilities: { elicitation: { url: {} } } };
  const echoThrough = async (client: Client, server_id: string, text: string) => {
    const result = await client.callTool({ name: "execute_child_tool", arguments: { server_id, tool_name: "echo", arguments: { text } } });
    return (result.content as Array<{ text: string }>)[0]!.text;
  };

  it("is asked to open the authorization page; once the person signs in there, the call completes", async () => {
    const gaggle = await gatewayFor("asks");
    try {
      const client = await gaggle.connect({ client: capabilities });
      const asked: Array<Record<string, unknown>> = [];
      const completed: unknown[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params);
        // The person opens the page once the client has agreed to show it.
        setTimeout(() => void browse((request.params as { url: string }).url, as.issuer), 10);
        return { action: "accept" };
      });
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => void completed.push(notification.params.elicitationId));
      expect(await echoThrough(client, "asks", "after sign-in")).toBe("after sign-in");
      expect(asked).toEqual([
        {
          mode: "url",
          url: expect.stringMatching(new RegExp(`^${as.issuer}/auth\\?`)),
          elicitationId: expect.any(String),
          message: "asks needs you to sign in. Open this page to sign in; gaggle goes on with the call once you have.",
        },
      ]);
      expect(completed).toEqual([asked[0]!.elicitationId]);
      expect((await storeOf("asks").read()).tokens?.access_token).toBeDefined();
      await client.close();
    } finally {
      await gaggle.stop();
    }
  });

  it("a 2026-07-28 client gets the page in an input_required result; its retry completes once the person has signed in", async () => {
    const gaggle = await gatewayFor("modern");
    try {
      const params = {
        name: "execute_child_tool",
        arguments: { server_id: "modern", tool_name: "echo", arguments: { text: "modern" } },
        _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } } }),
      };
      const first = (await modernCall(gaggle.port, { method: "tools/call", params })).message.result as {
        resultType: string;
        requestState: string;
        inputRequests: Record<string, { method: string; params: { mode: string; url: string } }>;
      };
      expect(first.resultType).toBe("input_required");
      const [[key, request]] = Object.entries(first.inputRequests) as [[string, { method: string; params: { mode: string; url: string } }]];
      expect(request).toMatchObject({
        method: "elicitation/create",
        params: { mode: "url", url: expect.stringMatching(new RegExp(`^${as.issuer}/auth\\?`)) },
      });
      const retry = modernCall(gaggle.port, {
        id: 2,
        method: "tools/call",
        params: { ...params, requestState: first.requestState, inputResponses: { [key]: { action: "accept" } } },
      });
      await browse(request.params.url, as.issuer);
      const done = (await retry).message.result as { content: Array<{ text: string }> };
      expect(done.content[0]!.text).toBe("modern");
    } finally {
      await gaggle.stop();
    }
  });

  it("fails the call with AUTH_REQUIRED when the person declines", async () => {
    const gaggle = await gatewayFor("declines");
    try {
      const client = await gaggle.connect({ client: capabilities });
      client.setRequestHandler(ElicitRequestSchema, () => ({ action: "decline" }));
      expect(JSON.parse(await echoThrough(client, "declines", "x"))).toMatchObject({
        code: "AUTH_REQUIRED",
        error: expect.stringContaining("the sign-in offered through the client did not finish: the sign-in page was not opened (declined)"),
        hint: `run: gaggle auth login --config ${gaggle.config} declines`,
      });
      await client.close();
    } finally {
      await gaggle.stop();
    }
  });
});

describe("step-up: a call that needs more scopes than the sign-in granted", () => {
  let steps: ListeningFixture;
  let config: string;
  const call = async (tool: string) => JSON.parse((await runCli(["call", "steps", tool, "{}", "--config", config], { env })).stdout);

  beforeAll(async () => {
    steps = await startListeningFixture("oauth-protected.mjs", ["--issuer", as.issuer, "--tool-scope", "pid=mcp:write", "--refuse-tool", "image"]);
    config = writeConfig([NO_BUILT_INS, `[mcp_servers.steps]\ntype = "http"\nurl = "http://127.0.0.1:${steps.port}/mcp"\n`].join("\n"));
  });
  afterAll(() => steps?.kill());

  const scopeAsked = (authorizationUrl: string) => new URL(authorizationUrl).searchParams.get("scope");

  it("fails with AUTH_REQUIRED naming the scopes; the next sign-in asks for them beside those granted, and the call goes through", async () => {
    const first = await login(config, "steps", async (url) => expect(scopeAsked(url)).toBe("mcp:read"));
    expect(first.stdout).toContain("steps: signed in; scopes granted: mcp:read");
    expect(await call("pid")).toMatchObject({
      code: "AUTH_REQUIRED",
      error: 'steps needs you to sign in: a call needs the scopes "mcp:read mcp:write", more than its sign-in granted ("mcp:read")',
      hint: `run: gaggle auth login --config ${config} steps`,
    });

    const second = await login(config, "steps", async (url) => expect(scopeAsked(url)).toBe("mcp:read mcp:write"));
    expect(second.stdout).toContain("steps: signed in; scopes granted: mcp:read mcp:write");
    expect(await call("pid")).toEqual(expect.any(Number));
  });

  it("a refusal for scopes the sign-in already holds fails at once, with no sign-in asked for", async () => {
    expect(await call("image")).toMatchObject({
      code: "PERMISSION_DENIED",
      error: 'steps refused the request for lacking the scopes "mcp:read", which its sign-in already holds; signing in again would not change that',
    });
    expect((await storeOf("steps", `http://127.0.0.1:${steps.port}/mcp`).read()).scopeWanted).toBeUndefined();
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe("a sign-in that fails says which step failed", () => {
  it("names the URL of an authorization server it could not reach", async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const orphan = await startListeningFixture("oauth-protected.mjs", ["--issuer", down]);
    try {
      const config = writeConfig([NO_BUILT_INS, `[mcp_servers.orphan]\ntype = "http"\nurl = "http://127.0.0.1:${orphan.port}/mcp"\n`].join("\n"));
      const out = await runCli(["auth", "login", "orphan", "--config", config], { env });
      expect(out.code).toBe(1);
      expect(out.stderr).toContain(
        `gaggle: signing in to orphan failed: could not reach ${down}/.well-known/oauth-authorization-server (ECONNREFUSED)`,
      );
      // A call says the same, and what to check.
      const call = await runCli(["call", "orphan", "echo", "{}", "--config", config], { env });
      expect(JSON.parse(call.stdout)).toEqual({
        status: "failed",
        code: "SERVER_FAILED",
        error: `orphan failed to start: could not reach ${down}/.well-known/oauth-authorization-server (ECONNREFUSED)`,
        hint: `a server of the sign-in (${down}) is not answering: check that it is up and reachable from here`,
      });
    } finally {
      orphan.kill();
    }
  });

  it("says when the authorization server publishes no metadata, and what came of the endpoints guessed for it", async () => {
    // The resource fixture itself stands for a server that answers 404 to every metadata URL.
    const bare = `http://127.0.0.1:${resource.port}`;
    const lost = await startListeningFixture("oauth-protected.mjs", ["--issuer", bare]);
    try {
      const config = writeConfig([NO_BUILT_INS, `[mcp_servers.lost]\ntype = "http"\nurl = "http://127.0.0.1:${lost.port}/mcp"\n`].join("\n"));
      const out = await runCli(["auth", "login", "lost", "--config", config], { env });
      expect(out.code).toBe(1);
      expect(out.stderr).toContain(
        `gaggle: signing in to lost failed: ${bare} publishes no authorization server metadata (RFC 8414 or OpenID Connect discovery, under /.well-known/), ` +
          "so gaggle used the endpoints such a server has by default, and: ",
      );
      expect(out.stderr).toMatch(/404/);
    } finally {
      lost.kill();
    }
  });

  it("gives the authorization server's own words and error code when it refuses the registration", async () => {
    const strict = await startListeningFixture("oauth-protected.mjs", ["--issuer", as.issuer, "--tool-scope", "pid=mcp:admin"]);
    try {
      const config = writeConfig([NO_BUILT_INS, `[mcp_servers.strict]\ntype = "http"\nurl = "http://127.0.0.1:${strict.port}/mcp"\n`].join("\n"));
      expect((await login(config, "strict")).code).toBe(0);
      // The call is refused for mcp:admin, a scope this server does not know: the next sign-in asks for it.
      expect(JSON.parse((await runCli(["call", "strict", "pid", "{}", "--config", config], { env })).stdout)).toMatchObject({
        code: "AUTH_REQUIRED",
      });
      const out = await runCli(["auth", "login", "strict", "--config", config], { env });
      expect(out.code).toBe(1);
      expect(out.stderr).toMatch(/^gaggle: signing in to strict failed: .*scope.* \(the authorization server's error: invalid_client_metadata\)$/m);
    } finally {
      strict.kill();
    }
  });
});

describe("the client credentials grant", () => {
  it("gets a token with no person involved, and calls go through", async () => {
    const config = configFor(
      "robot",
      `\n[mcp_servers.robot.oauth]\ngrant = "client_credentials"\nclient_id = "robot"\nclient_secret = "robot-secret"\n`,
    );
    expect((await echo(config, "robot", "unattended")).stdout.trim()).toBe("unattended");
    expect((await storeOf("robot").read()).tokens?.access_token).toBeDefined();
    expect(readFileSync(storeOf("robot").file, "utf8")).not.toContain("robot-secret");
  });
});
