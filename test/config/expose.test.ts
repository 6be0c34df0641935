import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { validateConfigText } from "../../src/config/index.js";
import { configError, tempDir } from "./files.js";

const tmp = tempDir();
afterAll(() => tmp.remove());
const path = () => join(tmp.dir, "children_config.toml");
const load = (text: string) => validateConfigText(text, path(), {});
const problems = (text: string) => configError(() => load(text)).issues.map((issue) => `${issue.path}: ${issue.message}`);

describe("exposure settings", () => {
  it("reads a child's expose and prefix", () => {
    const config = load(`[mcp_servers.a]\ncommand = "x"\nexpose = "tools"\nprefix = ""\n[mcp_servers.b]\ncommand = "y"\n`);
    expect(config.children.map(({ name, expose, prefix }) => ({ name, expose, prefix }))).toEqual([
      { name: "a", expose: "tools", prefix: "" },
      { name: "b", expose: undefined, prefix: undefined },
    ]);
  });

  it("names both children when their exposed prefixes collide", () => {
    expect(
      problems(`[gateway]\nexpose = "tools"\n[mcp_servers.a]\ncommand = "x"\nprefix = "p"\n[mcp_servers.b]\ncommand = "y"\nprefix = "p"\n`),
    ).toEqual([
      'mcp_servers.b.prefix: exposed tool names of "b" collide with those of "a": both use the prefix "p"; give one of them another "prefix"',
    ]);
  });

  it("lets children share a prefix when they are not exposed as tools", () => {
    expect(load(`[mcp_servers.a]\ncommand = "x"\nprefix = "p"\n[mcp_servers.b]\ncommand = "y"\nprefix = "p"\n`).children).toHaveLength(2);
  });

  it("rejects a prefix that cannot be part of a tool name", () => {
    expect(problems(`[mcp_servers.a]\ncommand = "x"\nprefix = "a b"\n`)[0]).toMatch(/^mcp_servers\.a\.prefix: expected letters, digits/);
  });
});

describe("HTTP serving settings", () => {
  it("has safe defaults", () => {
    expect(load("").gateway).toMatchObject({
      allowedHosts: [],
      allowedOrigins: [],
      maxBodyBytes: 4194304,
      maxClientQueueBytes: 4194304,
      sessionIdleTimeoutMs: 1800000,
    });
    expect(load("").gateway.authToken).toBeUndefined();
  });

  it("reads the token, allowlists and limits", () => {
    const gateway = load(
      `[gateway]\nauth_token = "t0k-0123456789abcdef"\nallowed_hosts = ["gaggle.local:8080"]\nallowed_origins = ["https://app.example"]\nmax_body_bytes = 1024\nmax_client_queue_bytes = 65536\nsession_idle_timeout_ms = 5000\n`,
    ).gateway;
    expect(gateway).toMatchObject({
      authToken: "t0k-0123456789abcdef",
      allowedHosts: ["gaggle.local:8080"],
      allowedOrigins: ["https://app.example"],
      maxBodyBytes: 1024,
      maxClientQueueBytes: 65536,
      sessionIdleTimeoutMs: 5000,
    });
  });

  it("reads named tokens, each given once, from the environment", () => {
    const text = `[gateway]\nauth_token = "t0k-0123456789abcdef"\nauth_tokens = { ci = "\${CI_TOKEN}", "ann.b" = "ann-secret-0123456789" }\n`;
    expect(validateConfigText(text, path(), { CI_TOKEN: "ci-secret-0123456789" }).gateway.authTokens).toEqual({
      ci: "ci-secret-0123456789",
      "ann.b": "ann-secret-0123456789",
    });
    const [same, one] = ["same-0123456789abcdef", "one-0123456789abcdef"];
    expect(problems(`[gateway]\nauth_token = "${same}"\nauth_tokens = { a = "${one}", b = "${one}", c = "${same}" }\n`)).toEqual([
      "gateway.auth_tokens.b: the same token as auth_tokens.a: give each name its own token",
      "gateway.auth_tokens.c: the same token as auth_token: give each name its own token",
    ]);
    expect(problems(`[gateway]\nauth_tokens = { "a b" = "${one}" }\n`)[0]).toMatch(
      /^gateway\.auth_tokens\["a b"\]: invalid token name "a b": expected letters/,
    );
    expect(problems(`[gateway]\nauth_tokens = { a = "" }\n`)).toEqual(["gateway.auth_tokens.a: expected a non-empty token"]);
  });

  it("refuses tokens named as gaggle's own principals, and tokens short enough to guess, without repeating them", () => {
    const token = "a-token-0123456789abcdef";
    expect(problems(`[gateway]\nauth_tokens = { local = "${token}" }\n`)).toEqual([
      'gateway.auth_tokens.local: the token name "local" is gaggle\'s own principal (the client on stdio (and every client of a listener without tokens)): pick another name',
    ]);
    expect(problems(`[gateway]\nauth_token = "${token}-main"\nauth_tokens = { auth_token = "${token}" }\n`)).toEqual([
      'gateway.auth_tokens.auth_token: the token name "auth_token" is gaggle\'s own principal (the holder of gateway.auth_token or GAGGLE_AUTH_TOKEN): pick another name',
    ]);
    const short = problems(`[gateway]\nauth_token = "x"\nauth_tokens = { ann = "ann-0123" }\n`);
    expect(short).toEqual([
      "gateway.auth_token: a token of 1 characters is too short to keep anyone out: use at least 16 (e.g. `openssl rand -hex 24`)",
      "gateway.auth_tokens.ann: a token of 8 characters is too short to keep anyone out: use at least 16 (e.g. `openssl rand -hex 24`)",
    ]);
    expect(short.join("\n")).not.toContain("ann-0123");
  });

  it("rejects a limit that is not a positive integer", () => {
    expect(problems(`[gateway]\nmax_body_bytes = 0\n`)).toEqual(["gateway.max_body_bytes: expected a positive integer, got number 0"]);
    expect(problems(`[gateway]\nmax_client_queue_bytes = 1.5\n`)).toEqual([
      "gateway.max_client_queue_bytes: expected a positive integer, got number 1.5",
    ]);
  });
});
