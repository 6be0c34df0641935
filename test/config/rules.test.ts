import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { validateConfigText } from "../../src/config/index.js";
import { configError, tempDir } from "./files.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

function problems(text: string, name = "children_config.toml"): string[] {
  const err = configError(() => validateConfigText(text, join(tmp.dir, name), {}));
  return err.issues.map((issue) => `${issue.path}: ${issue.message}`);
}
const child = (entry: string): string[] => problems(`[mcp_servers.echo]\n${entry}\n`);

describe("transport rules", () => {
  it("needs a command or a url", () => {
    expect(child(`description = "nothing to run"`)).toEqual([
      'mcp_servers.echo: expected "command" (a stdio server) or "url" (an http or sse server), got neither',
    ]);
  });

  it("rejects type and transport that disagree", () => {
    expect(child(`type = "http"\ntransport = "sse"\nurl = "http://h/"`)).toEqual([
      'mcp_servers.echo.transport: expected the same transport as "type" ("http"), got string "sse"; keep only one of them',
    ]);
  });

  it("stdio needs command and takes no url or headers", () => {
    expect(child(`type = "stdio"\nurl = "http://h/"\nheaders = { A = "b" }`)).toEqual([
      'mcp_servers.echo.command: expected a command for the stdio transport (set by "type"), got nothing',
      'mcp_servers.echo.url: not used by the stdio transport (set by "type"); remove it',
      'mcp_servers.echo.headers: only used by the http and sse transports, but this server uses stdio (set by "type"); remove it',
    ]);
    expect(child(`command = "node"\nurl = "http://h/"`)).toEqual([
      'mcp_servers.echo.url: not used by the stdio transport (inferred from "command"); remove it, or remove "command" to make this an http server',
    ]);
  });

  it("http and sse need url and take no command or stdio-only keys", () => {
    expect(child(`transport = "sse"\ncommand = "node"\nargs = ["x"]\nenv = { A = "b" }\ncwd = "."\ninherit_env = false`)).toEqual([
      'mcp_servers.echo.url: expected an http(s) URL for the sse transport (set by "transport"), got nothing',
      'mcp_servers.echo.command: not used by the sse transport (set by "transport"); remove it',
      'mcp_servers.echo.args: only used by the stdio transport, but this server uses sse (set by "transport"); remove it',
      'mcp_servers.echo.env: only used by the stdio transport, but this server uses sse (set by "transport"); remove it',
      'mcp_servers.echo.cwd: only used by the stdio transport, but this server uses sse (set by "transport"); remove it',
      'mcp_servers.echo.inherit_env: only used by the stdio transport, but this server uses sse (set by "transport"); remove it',
    ]);
  });

  it("lets empty args, env and headers through on either transport", () => {
    const text = `[mcp_servers.a]\nurl = "http://h/"\nargs = []\nenv = {}\n[mcp_servers.b]\ncommand = "n"\nheaders = {}\n`;
    expect(validateConfigText(text, join(tmp.dir, "c.toml"), {}).children).toHaveLength(2);
  });
});

describe("other rules across keys", () => {
  it("rejects enabled and disabled together", () => {
    expect(child(`command = "n"\nenabled = true\ndisabled = false`)).toEqual([
      'mcp_servers.echo.disabled: cannot be combined with "enabled"; keep one of them',
    ]);
  });

  it("needs max_timeout_ms >= timeout_ms, given or default", () => {
    expect(child(`command = "n"\ntimeout_ms = 5000\nmax_timeout_ms = 4000`)).toEqual([
      "mcp_servers.echo.max_timeout_ms: expected an integer >= timeout_ms (5000), got number 4000",
    ]);
    expect(child(`command = "n"\nmax_timeout_ms = 1000`)).toEqual([
      "mcp_servers.echo.max_timeout_ms: expected an integer >= timeout_ms (60000, the default), got number 1000",
    ]);
  });

  it("rejects mcp_servers and mcpServers together", () => {
    expect(problems(`{"mcpServers": {"a": {"command": "n"}}, "mcp_servers": {}}`, "c.json")).toEqual([
      'mcpServers: cannot be combined with "mcp_servers" (the same table under its TOML and JSON names); keep one',
    ]);
  });
});

describe("server names", () => {
  it("must be plain words", () => {
    expect(problems(`[mcp_servers."my server"]\ncommand = "n"\n[mcp_servers._x]\ncommand = "n"\n[mcp_servers.a-b_C9]\ncommand = "n"\n`)).toEqual([
      'mcp_servers["my server"]: invalid server name "my server": expected letters, digits, "_" or "-", starting with a letter or digit',
      'mcp_servers._x: invalid server name "_x": expected letters, digits, "_" or "-", starting with a letter or digit',
    ]);
  });

  it("must not be a reserved virtual child name", () => {
    expect(problems(`{"mcpServers": {"team": {"command": "n"}}}`, "c.json")).toEqual([
      'mcpServers.team: the name "team" is reserved for a built-in virtual child; pick another name',
    ]);
  });

  it("in [[mcp_servers]]: must be present, valid and unique, named by index", () => {
    expect(
      problems(`[[mcp_servers]]
name = "a"
command = "n"
[[mcp_servers]]
command = "n"
[[mcp_servers]]
name = "a"
command = "n"
[[mcp_servers]]
name = "process"
command = "n"
[[mcp_servers]]
name = "a"
url = "http://h/"
`),
    ).toEqual([
      "mcp_servers[1].name: expected a server name, got nothing",
      'mcp_servers[2].name: duplicate server name "a" (first used by entry [0])',
      'mcp_servers[3].name: the name "process" is reserved for a built-in virtual child; pick another name',
      'mcp_servers[4].name: duplicate server name "a" (first used by entry [0])',
    ]);
  });

  it("named like what every object has are names like any other, in TOML and JSON", () => {
    const names = ["constructor", "toString", "hasOwnProperty", "valueOf"];
    const toml = names.map((name) => `[mcp_servers.${name}]\ncommand = "n"\n`).join("");
    const json = JSON.stringify({ mcpServers: Object.fromEntries(names.map((name) => [name, { command: "n" }])) });
    expect(validateConfigText(toml, join(tmp.dir, "c.toml"), {}).children.map((c) => c.name)).toEqual(names);
    expect(validateConfigText(json, join(tmp.dir, "c.json"), {}).children.map((c) => c.name)).toEqual(names);
  });

  it("__proto__ is refused, in TOML and JSON, instead of the server being dropped", () => {
    const refused = 'mcp_servers.__proto__: "__proto__" cannot be a name or key here (JavaScript objects reserve it); rename it';
    expect(problems(`[mcp_servers.__proto__]\ncommand = "n"\n`)).toEqual([refused]);
    expect(problems(`{"mcp_servers": {"__proto__": {"command": "n"}}}`, "c.json")).toEqual([refused]);
  });

  it("in a table: a name key is unknown", () => {
    expect(child(`name = "echo"\ncommand = "n"`)).toEqual([
      "mcp_servers.echo.name: unknown key; a server's name is its key in the servers table, so remove it",
    ]);
  });
});

describe("JSON duplicate keys", () => {
  it("are errors instead of the last one silently winning", () => {
    const text = `{
  "mcpServers": {
    "echo": { "command": "a" },
    "echo": { "command": "b", "args": [], "args": [] }
  }
}`;
    expect(problems(text, "c.json")).toEqual([
      "mcpServers.echo: duplicate key at 4:5 (first at 3:5); JSON would keep only the last one",
      "mcpServers.echo.args: duplicate key at 4:43 (first at 4:31); JSON would keep only the last one",
    ]);
  });
});

describe("oauth rules", () => {
  const remote = (oauth: string) => child(`url = "https://h/mcp"\n[mcp_servers.echo.oauth]\n${oauth}`);

  it("a private key is PEM text, never echoed back, and proves a client instead of a secret", () => {
    expect(remote(`client_id = "robot"\nprivate_key = "not a key but maybe a secret"`)).toEqual([
      'mcp_servers.echo.oauth.private_key: expected a PEM private key in PKCS#8 form (it starts "-----BEGIN PRIVATE KEY-----"), got other text',
    ]);
    const pem = "-----BEGIN PRIVATE KEY-----\\nMIGH\\n-----END PRIVATE KEY-----";
    expect(remote(`client_id = "robot"\nclient_secret = "s"\nprivate_key = "${pem}"`)).toEqual([
      'mcp_servers.echo.oauth.private_key: cannot be combined with "client_secret": the client proves itself with one of them; keep one',
    ]);
    expect(remote(`client_id = "robot"\nsigning_alg = "ES256"`)).toEqual([
      'mcp_servers.echo.oauth.signing_alg: only used with "private_key"; set private_key or remove it',
    ]);
    expect(remote(`client_id = "robot"\nprivate_key = "${pem}"\nsigning_alg = "HS256"`)[0]).toMatch(
      /^mcp_servers\.echo\.oauth\.signing_alg: expected one of "ES256", /,
    );
  });

  it("the client credentials grant needs a client_id", () => {
    expect(remote(`grant = "client_credentials"`)).toEqual([
      "mcp_servers.echo.oauth.client_id: expected a client_id for the client_credentials grant (with client_secret or private_key), got nothing",
    ]);
  });
});

describe("the enterprise grant (SEP-990)", () => {
  const remote = (oauth: string) => child(`url = "https://h/mcp"\n[mcp_servers.echo.oauth]\ngrant = "enterprise"\n${oauth}`);

  it("needs the client, the identity provider's token endpoint and client, and the ID token", () => {
    expect(remote("")).toEqual([
      "mcp_servers.echo.oauth.client_id: expected a value for the enterprise grant (SEP-990), got nothing",
      "mcp_servers.echo.oauth.idp_token_endpoint: expected a value for the enterprise grant (SEP-990), got nothing",
      "mcp_servers.echo.oauth.idp_client_id: expected a value for the enterprise grant (SEP-990), got nothing",
      "mcp_servers.echo.oauth.id_token: expected a value for the enterprise grant (SEP-990), got nothing",
    ]);
  });

  it("loads into the child's oauth config", () => {
    const config = validateConfigText(
      `[mcp_servers.echo]\nurl = "https://h/mcp"\n[mcp_servers.echo.oauth]\ngrant = "enterprise"\nclient_id = "c"\nclient_secret = "s"\n` +
        `idp_token_endpoint = "https://idp.example/token"\nidp_client_id = "gaggle"\nid_token = "eyJ"\n`,
      join(tmp.dir, "children_config.toml"),
      {},
    );
    expect(config.children[0]!.oauth).toMatchObject({
      grant: "enterprise",
      clientId: "c",
      enterprise: { idpTokenEndpoint: "https://idp.example/token", idpClientId: "gaggle", idToken: "eyJ" },
    });
  });
});
