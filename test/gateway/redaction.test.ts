import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGaggle, textOf, type RunningGaggle } from "../helpers/gaggle.js";
import { startHttpFixture, type HttpFixture } from "../helpers/http-fixture.js";
import { fixtureChild } from "../helpers/paths.js";

// Secrets in env, headers and sign-in settings must reach the child (or its authorization server) and nothing
// else: not the resources, not the logs.
const ENV_SECRET = "s3cret-env-value";
const HEADER_SECRET = "s3cret-header-value";
const OAUTH_SECRETS = ["s3cret-client-secret", "s3cret-idp-secret", "s3cret-id-token", "s3cret-private-key"];

interface ChildEntry {
  name: string;
  transport: string;
  config: { env: Record<string, string>; headers: Record<string, string>; url?: string } | null;
}

let server: HttpFixture;
let gaggle: RunningGaggle;
let config: string;

beforeAll(async () => {
  // The fixture refuses every request without the header, so a working call proves gaggle sent it.
  server = await startHttpFixture(`Authorization=Bearer ${HEADER_SECRET}`);
  config = [
    fixtureChild("local", "echo.mjs", `env = { API_TOKEN = "${ENV_SECRET}", PLAIN = "visible-to-child" }`),
    `[mcp_servers.remote]\ntype = "http"\nurl = "${server.origin}/mcp"\nheaders = { Authorization = "Bearer ${HEADER_SECRET}" }\n`,
    `[mcp_servers.remote_sse]\ntype = "sse"\nurl = "${server.origin}/sse"\nheaders = { Authorization = "Bearer ${HEADER_SECRET}" }\n`,
    `[mcp_servers.enterprise]\nurl = "${server.origin}/mcp"\n[mcp_servers.enterprise.oauth]\ngrant = "enterprise"\nclient_id = "c"\n` +
      `client_secret = "${OAUTH_SECRETS[0]}"\nidp_token_endpoint = "https://idp.example/token"\nidp_client_id = "gaggle"\n` +
      `idp_client_secret = "${OAUTH_SECRETS[1]}"\nid_token = "${OAUTH_SECRETS[2]}"\n`,
    `[mcp_servers.robot]\nurl = "${server.origin}/mcp"\n[mcp_servers.robot.oauth]\ngrant = "client_credentials"\nclient_id = "r"\n` +
      `private_key = "-----BEGIN PRIVATE KEY-----\\n${OAUTH_SECRETS[3]}\\n-----END PRIVATE KEY-----"\n`,
  ].join("\n");
  gaggle = await startGaggle(config, { args: ["--log-level", "trace"] });
});
afterAll(async () => {
  await gaggle?.close();
  await server?.stop();
});

const call = (g: RunningGaggle, server_id: string, tool: string, args: Record<string, unknown> = {}) =>
  g.meta("execute_child_tool", { server_id, tool_name: tool, arguments: args });

async function resourceText(uri: string): Promise<string> {
  const [block] = (await gaggle.client.readResource({ uri })).contents;
  if (!block || !("text" in block)) throw new Error(`expected a text resource at ${uri}`);
  return block.text;
}

async function childrenResource(): Promise<{ text: string; children: ChildEntry[] }> {
  const text = await resourceText("mcp://children_servers");
  return { text, children: (JSON.parse(text) as { children: ChildEntry[] }).children };
}

function expectNoSecret(text: string): void {
  for (const secret of [ENV_SECRET, HEADER_SECRET, ...OAUTH_SECRETS]) expect(text).not.toContain(secret);
}

describe("mcp://children_servers", () => {
  it("shows env and header keys with their values redacted, before and after the children start", async () => {
    for (const phase of ["before", "after"]) {
      if (phase === "after") {
        expect(textOf(await call(gaggle, "local", "echo", { text: "up" }))).toBe("up");
        expect(textOf(await call(gaggle, "remote", "echo", { text: "up" }))).toBe("up");
        expect(textOf(await call(gaggle, "remote_sse", "echo", { text: "up" }))).toBe("up");
      }
      const { text, children } = await childrenResource();
      expectNoSecret(text);
      const byName = new Map(children.map((child) => [child.name, child]));
      expect(byName.get("local")!.config!.env).toEqual({ API_TOKEN: "[redacted]", PLAIN: "[redacted]" });
      expect(byName.get("enterprise")!.config).toMatchObject({
        oauth: { clientSecret: "[redacted]", enterprise: { idToken: "[redacted]", idpClientSecret: "[redacted]", idpClientId: "gaggle" } },
      });
      expect(byName.get("robot")!.config).toMatchObject({ oauth: { privateKey: { pem: "[redacted]", alg: "ES256" } } });
      for (const name of ["remote", "remote_sse"]) {
        expect(byName.get(name)!.config!.headers).toEqual({ Authorization: "[redacted]" });
        expect(byName.get(name)!.config!.url).toBe(`${server.origin}/${name === "remote" ? "mcp" : "sse"}`);
      }
    }
  });

  it("keeps the secrets out of the other resource and of every meta-tool answer", async () => {
    expectNoSecret(await resourceText("mcp://server_summary"));
    for (const server_id of ["local", "remote", "remote_sse"]) {
      expectNoSecret(textOf(await gaggle.meta("get_child_status", { server_id })));
      expectNoSecret(textOf(await gaggle.meta("get_schema", { server_id })));
    }
    expectNoSecret(textOf(await gaggle.meta("list_registered_children")));
  });
});

describe("logs", () => {
  it("never write either secret to stderr at trace level, through calls, closes and shutdown", async () => {
    for (const server_id of ["local", "remote", "remote_sse"]) {
      expect(textOf(await call(gaggle, server_id, "echo", { text: "logged" }))).toBe("logged");
      expect((await call(gaggle, server_id, "fail", { message: "a tool error" })).isError).toBe(true);
      await gaggle.meta("close_child_session", { server_id });
      expect(textOf(await call(gaggle, server_id, "echo", { text: "again" }))).toBe("again");
    }
    await gaggle.close();
    // The log really is at trace level (so the test would see a leak): session starts are in it.
    await expect.poll(() => gaggle.stderr(), { timeout: 5000 }).toContain("all children stopped");
    expect(gaggle.stderr()).toContain('"msg":"session started"');
    expectNoSecret(gaggle.stderr());
  });
});

describe("the child itself", () => {
  it("receives the env value and the header value as configured", async () => {
    // A separate gateway: this call puts the secret in a tool result on purpose.
    const other = await startGaggle(config);
    try {
      expect(textOf(await call(other, "local", "env", { name: "API_TOKEN" }))).toBe(ENV_SECRET);
      expect(textOf(await call(other, "local", "env", { name: "PLAIN" }))).toBe("visible-to-child");
      expect(textOf(await call(other, "remote", "echo", { text: "authorised" }))).toBe("authorised");
      expect(server.stderr()).not.toMatch(/401 for/);
    } finally {
      await other.close();
    }
  });
});
