import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, issuePlaces, loadConfig, validateConfigText } from "../../src/config/index.js";
import { configError, tempDir } from "./files.js";

const tmp = tempDir();
afterAll(() => tmp.remove());
const tomlFile = join(tmp.dir, "children_config.toml");

/** The issues (as `path: message` lines) that `text` as a TOML config produces. */
function problems(text: string, file = tomlFile): string[] {
  const err = configError(() => validateConfigText(text, file, {}));
  return err.issues.map((issue) => `${issue.path}: ${issue.message}`);
}
const child = (entry: string): string[] => problems(`[mcp_servers.echo]\n${entry}\n`);

describe("ConfigError", () => {
  it("prefixes every issue line with the file, shown relative to the working directory when under it", () => {
    const err = configError(() => validateConfigText(`[mcp_servers.echo]\ncommand = "n"\ntimeout_ms = "abc"\n`, "children_config.toml", {}));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.name).toBe("ConfigError");
    expect(err.code).toBe("invalid");
    expect(err.file).toBe(join(process.cwd(), "children_config.toml"));
    expect(err.issues).toEqual([{ path: "mcp_servers.echo.timeout_ms", message: 'expected a positive integer, got string "abc"' }]);
    expect(err.message).toBe('children_config.toml: mcp_servers.echo.timeout_ms: expected a positive integer, got string "abc"');
  });

  it("reports every issue at once, one per line, from a file on disk", () => {
    const path = tmp.write(
      "many.toml",
      `verbose = true
[mcp_server.x]
[gateway]
log_level = "loud"
[mcp_servers.echo]
comand = "node"
args = "--x"
[mcp_servers.web]
url = "not a url"
timeout_ms = 0
`,
    );
    const err = configError(() => loadConfig(path, {}));
    expect(err.message.split("\n")).toEqual([
      `${path}: mcp_servers.echo.args: expected an array of strings, got string "--x"`,
      `${path}: mcp_servers.echo.comand: unknown key; did you mean "command"?`,
      `${path}: mcp_servers.web.url: expected an http(s) URL, got string "not a url"`,
      `${path}: mcp_servers.web.timeout_ms: expected a positive integer, got number 0`,
      `${path}: gateway.log_level: expected one of "fatal", "error", "warn", "info", "debug", "trace", "silent", got string "loud"`,
      `${path}: verbose: unknown key; expected one of "mcp_servers", "mcpServers", "gateway", "virtual", "agents", "telemetry", "audit"`,
      `${path}: mcp_server: unknown key; did you mean "mcp_servers"?`,
    ]);
  });
});

describe("issuePlaces, for readers without a token", () => {
  it("names the file and key of each problem, not what it says", () => {
    const err = configError(() => validateConfigText(`[mcp_servers.echo]\ncommand = "n"\ntimeout_ms = "secret-ish"\n`, tomlFile, {}));
    expect(issuePlaces(err)).toEqual(["children_config.toml: mcp_servers.echo.timeout_ms"]);
    const syntax = configError(() => validateConfigText(`[gateway\n`, tomlFile, {}));
    expect(issuePlaces(syntax)).toEqual([expect.stringMatching(/^children_config\.toml:1:\d+$/)]);
  });

  it("stops a place in the token table at the table, so it names no one the gaggle lets in", () => {
    const text = `[gateway]\nauth_tokens = { bob2 = "one-0123456789abcdef", "carol b" = "x", dan = "" }\nlog_level = "loud"\n`;
    const err = configError(() => validateConfigText(text, tomlFile, {}));
    expect(err.message).toContain("gateway.auth_tokens.dan");
    expect(err.message).toContain('gateway.auth_tokens["carol b"]');
    const places = issuePlaces(err);
    expect(places).toContain("children_config.toml: gateway.log_level");
    expect(places.filter((place) => place.includes("auth_tokens"))).toEqual([
      "children_config.toml: gateway.auth_tokens",
      "children_config.toml: gateway.auth_tokens",
    ]);
    expect(places.join("\n")).not.toMatch(/bob2|carol|dan/);
  });
});

describe("values of the wrong type or range", () => {
  it("says what was expected and what was found", () => {
    expect(
      child(`command = 5
args = ["a", 1]
env = { A = 1 }
headers = "h"
cwd = ["."]
inherit_env = "yes"
startup = "soon"
timeout_ms = 1.5
max_timeout_ms = -1
startup_timeout_ms = "30s"
protocol = "2024-01-01"
concurrency = 0
idle_timeout_ms = -1
description = 7
type = "websocket"
tools = { allow = "echo*", deny = [true] }`),
    ).toEqual([
      "mcp_servers.echo.command: expected a string, got number 5",
      "mcp_servers.echo.args[1]: expected a string, got number 1",
      "mcp_servers.echo.env.A: expected a string, got number 1",
      'mcp_servers.echo.cwd: expected a string, got array ["."]',
      'mcp_servers.echo.inherit_env: expected true or false, got string "yes"',
      'mcp_servers.echo.headers: expected a table of strings, got string "h"',
      'mcp_servers.echo.type: expected one of "stdio", "http", "sse" ("streamable-http" also means "http"), got string "websocket"',
      'mcp_servers.echo.startup: expected one of "lazy", "eager", got string "soon"',
      "mcp_servers.echo.timeout_ms: expected a positive integer, got number 1.5",
      "mcp_servers.echo.max_timeout_ms: expected a positive integer, got number -1",
      'mcp_servers.echo.startup_timeout_ms: expected a positive integer, got string "30s"',
      'mcp_servers.echo.protocol: expected one of "auto", "2025-11-25", "2026-07-28", got string "2024-01-01"',
      "mcp_servers.echo.concurrency: expected an integer >= 1, got number 0",
      "mcp_servers.echo.idle_timeout_ms: expected an integer >= 0 (0 = never), got number -1",
      "mcp_servers.echo.description: expected a string, got number 7",
      'mcp_servers.echo.tools.allow: expected an array of strings, got string "echo*"',
      "mcp_servers.echo.tools.deny[0]: expected a string, got boolean true",
    ]);
  });

  it("accepts only http and https URLs", () => {
    expect(child(`url = "ftp://example.com"`)).toEqual(['mcp_servers.echo.url: expected an http(s) URL, got string "ftp://example.com"']);
  });

  it("checks gateway settings", () => {
    expect(problems(`[gateway]\nexpose = "all"\nshutdown_grace_ms = -5\n`)).toEqual([
      'gateway.expose: expected one of "meta", "tools", "both", "search", got string "all"',
      "gateway.shutdown_grace_ms: expected an integer >= 0, got number -5",
    ]);
  });

  it("shortens long values", () => {
    const [line] = child(`command = "n"\ntimeout_ms = "${"x".repeat(100)}"`);
    expect(line).toBe(`mcp_servers.echo.timeout_ms: expected a positive integer, got string "${"x".repeat(56)}...`);
  });

  it("rejects a servers table that is neither a table nor an array, and a document that is not a table", () => {
    expect(problems(`mcp_servers = 3\n`)).toEqual([
      "mcp_servers: expected a table of servers ([mcp_servers.NAME]) or an array of [[mcp_servers]] entries, got number 3",
    ]);
    expect(problems(`[1, 2]`, join(tmp.dir, "children_config.json"))).toEqual([": expected a table, got array [1,2]"]);
  });
});

describe("durations", () => {
  const big = 2 ** 31; // one past the longest wait setTimeout takes: it would fire at once
  const tooLong = `expected at most 2147483647 (about 24.8 days), got number ${big}`;

  it("are bounded by what a timer can wait, in every section, each saying the bound and what to write", () => {
    expect(
      problems(`[gateway]
shutdown_grace_ms = ${big}
session_idle_timeout_ms = ${big}
list_wait_ms = 600001
[mcp_servers.echo]
command = "n"
timeout_ms = ${big}
max_timeout_ms = ${big}
startup_timeout_ms = ${big}
idle_timeout_ms = ${big}
[virtual.process]
default_timeout_ms = ${big}
kill_grace_ms = ${big}
`),
    ).toEqual([
      `mcp_servers.echo.timeout_ms: ${tooLong}`,
      `mcp_servers.echo.max_timeout_ms: ${tooLong}`,
      `mcp_servers.echo.startup_timeout_ms: ${tooLong}`,
      `mcp_servers.echo.idle_timeout_ms: ${tooLong}; use 0 for no limit`,
      `gateway.shutdown_grace_ms: ${tooLong}`,
      `gateway.session_idle_timeout_ms: ${tooLong}`,
      "gateway.list_wait_ms: expected at most 600000, got number 600001",
      `virtual.process.default_timeout_ms: ${tooLong}; use 0 for no limit`,
      `virtual.process.kill_grace_ms: ${tooLong}`,
    ]);
  });

  it("take the longest wait a timer can, and a derived max_timeout_ms stays within it too", () => {
    const most = 2 ** 31 - 1;
    const config = validateConfigText(
      `[gateway]\nshutdown_grace_ms = ${most}\nsession_idle_timeout_ms = ${most}\n[mcp_servers.echo]\ncommand = "n"\ntimeout_ms = ${most}\nstartup_timeout_ms = ${most}\nidle_timeout_ms = ${most}\n`,
      tomlFile,
      {},
    );
    expect(config.gateway).toMatchObject({ shutdownGraceMs: most, sessionIdleTimeoutMs: most });
    expect(config.children[0]).toMatchObject({ timeoutMs: most, maxTimeoutMs: most, startupTimeoutMs: most, idleTimeoutMs: most });
  });
});

describe("unknown keys", () => {
  it("suggests the nearest known key everywhere", () => {
    expect(
      problems(`gatway = {}
[gateway]
loglevel = "info"
[mcp_servers.echo]
comand = "node"
tools = { alow = ["*"] }
[virtual.proces]
`),
    ).toEqual([
      'mcp_servers.echo.tools.alow: unknown key; did you mean "allow"?',
      'mcp_servers.echo.comand: unknown key; did you mean "command"?',
      'mcp_servers.echo: expected "command" (a stdio server) or "url" (an http or sse server), got neither',
      'gateway.loglevel: unknown key; did you mean "log_level"?',
      'virtual.proces: unknown key; did you mean "process"?',
      'gatway: unknown key; did you mean "gateway"?',
    ]);
  });

  it("maps camelCase spellings to the snake_case key", () => {
    expect(child(`command = "n"\ninheritEnv = false\nstartupTimeoutMs = 5`)).toEqual([
      'mcp_servers.echo.inheritEnv: unknown key; did you mean "inherit_env"?',
      'mcp_servers.echo.startupTimeoutMs: unknown key; did you mean "startup_timeout_ms"?',
    ]);
  });

  it("suggests the key a word begins or ends, when no key is a typo away", () => {
    expect(child(`command = "n"\ntimeout = 5000\nenv_vars = { A = "1" }`)).toEqual([
      'mcp_servers.echo.timeout: unknown key; did you mean "timeout_ms"?',
      'mcp_servers.echo.env_vars: unknown key; did you mean "env"?',
    ]);
    expect(problems(`[gateway]\nstate = "here"\n`)).toEqual(['gateway.state: unknown key; did you mean "state_dir"?']);
  });

  it("lists the known keys when nothing is close", () => {
    expect(problems(`[virtual.swarm]\n`)).toEqual([
      'virtual.swarm: unknown key; expected one of "process", "goose", "agents", "team", "duckdb", "imagen", "workspace"',
    ]);
  });

  it("never takes a suggestion from what every object has", () => {
    expect(problems(`constructor = 1\n[virtual]\ntoString = 2\n[mcp_servers.echo]\ncommand = "n"\nconstructor = 3\n`)).toEqual([
      expect.stringMatching(/^mcp_servers\.echo\.constructor: unknown key; expected one of "command", "args", /),
      'virtual.toString: unknown key; expected one of "process", "goose", "agents", "team", "duckdb", "imagen", "workspace"',
      'constructor: unknown key; expected one of "mcp_servers", "mcpServers", "gateway", "virtual", "agents", "telemetry", "audit"',
    ]);
  });

  it("refuses a key named __proto__ wherever it is, instead of dropping it", () => {
    const refused = '"__proto__" cannot be a name or key here (JavaScript objects reserve it); rename it';
    expect(child(`command = "n"\nenv = { __proto__ = "x" }\n__proto__ = { command = "m" }`)).toEqual([
      `mcp_servers.echo.env.__proto__: ${refused}`,
      `mcp_servers.echo.__proto__: ${refused}`,
    ]);
    const json = `{"gateway": {"__proto__": {}}, "mcpServers": {"echo": {"command": "n", "headers": {"__proto__": "x"}}}}`;
    expect(problems(json, join(tmp.dir, "c.json"))).toEqual([`gateway.__proto__: ${refused}`, `mcpServers.echo.headers.__proto__: ${refused}`]);
  });

  it("still checks the rest of an entry that has an unknown key", () => {
    expect(child(`comand = "node"`)).toEqual([
      'mcp_servers.echo.comand: unknown key; did you mean "command"?',
      'mcp_servers.echo: expected "command" (a stdio server) or "url" (an http or sse server), got neither',
    ]);
  });
});
