import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type ChildConfig, ConfigError, GATEWAY_DEFAULTS, loadConfig, validateConfigText } from "../../src/config/index.js";
import { VIRTUAL_DEFAULTS } from "../../src/config/virtual/index.js";
import { AUDIT_DEFAULTS, TELEMETRY_DEFAULTS } from "../../src/config/observe.js";
import { signInCommand } from "../../src/children/oauth/sign-in-command.js";
import { tempDir } from "./files.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

/** The normalized defaults of a stdio child named `name` in a config file in tmp.dir. */
function stdioChild(name: string, command: string, extra: Partial<ChildConfig> = {}): ChildConfig {
  return {
    name,
    transport: "stdio",
    command,
    args: [],
    env: {},
    cwd: tmp.dir,
    // Which file of tmp.dir each test's config is: the tests of configFile say.
    configFile: expect.stringMatching(/\.(toml|json)$/) as string,
    inheritEnv: true,
    headers: {},
    enabled: true,
    startup: "lazy",
    timeoutMs: 60_000,
    maxTimeoutMs: 600_000,
    startupTimeoutMs: 30_000,
    // Longer for a first `npx` start, unless startup_timeout_ms is set.
    firstStartupTimeoutMs: extra.startupTimeoutMs ?? (command === "npx" ? 180_000 : 30_000),
    protocol: "auto",
    concurrency: 1,
    idleTimeoutMs: 0,
    tools: { deny: [] },
    ...extra,
  };
}

function httpChild(name: string, transport: "http" | "sse", url: string, extra: Partial<ChildConfig> = {}): ChildConfig {
  const { command: _unused, ...rest } = stdioChild(name, "");
  // The legacy SSE transport has one era: gaggle does not ask.
  return { ...rest, transport, url, ...(transport === "sse" && { protocol: "2025-11-25" }), ...extra };
}

describe("loadConfig: TOML", () => {
  it("reads [mcp_servers.NAME] tables with every key", () => {
    const path = tmp.write(
      "children_config.toml",
      `[gateway]
log_level = "debug"
expose = "both"
shutdown_grace_ms = 500

[mcp_servers.echo]
command = "./fixtures/echo.mjs"
args = ["--loud"]
env = { LEVEL = "3" }
cwd = "work"
inherit_env = false
enabled = true
startup = "eager"
timeout_ms = 1000
max_timeout_ms = 5000
startup_timeout_ms = 2000
concurrency = 4
idle_timeout_ms = 30000
description = "echoes"
tools = { allow = ["echo*"], deny = ["echo_secret"] }

[mcp_servers.web]
type = "sse"
url = "https://example.com/sse"
headers = { Authorization = "Bearer x" }

[virtual.process]
expose = true
`,
    );
    expect(loadConfig(path, {})).toEqual({
      path,
      gateway: { ...GATEWAY_DEFAULTS, logLevel: "debug", expose: "both", shutdownGraceMs: 500 },
      children: [
        stdioChild("echo", join(tmp.dir, "fixtures/echo.mjs"), {
          args: ["--loud"],
          env: { LEVEL: "3" },
          cwd: join(tmp.dir, "work"),
          inheritEnv: false,
          startup: "eager",
          timeoutMs: 1000,
          maxTimeoutMs: 5000,
          startupTimeoutMs: 2000,
          concurrency: 4,
          idleTimeoutMs: 30_000,
          description: "echoes",
          tools: { allow: ["echo*"], deny: ["echo_secret"] },
        }),
        httpChild("web", "sse", "https://example.com/sse", { headers: { Authorization: "Bearer x" } }),
      ],
      virtual: {
        ...VIRTUAL_DEFAULTS,
        process: { ...VIRTUAL_DEFAULTS.process, expose: true },
        goose: { ...VIRTUAL_DEFAULTS.goose, cwd: tmp.dir },
        duckdb: { ...VIRTUAL_DEFAULTS.duckdb, roots: [tmp.dir] },
        workspace: { ...VIRTUAL_DEFAULTS.workspace, roots: [tmp.dir] },
      },
      agents: [],
      telemetry: TELEMETRY_DEFAULTS,
      audit: AUDIT_DEFAULTS,
    });
  });

  it("reads [agents.NAME] tables: defaults filled in, paths from the file's folder, the roots the cwd unless given", () => {
    const path = tmp.write(
      "agents.toml",
      `[agents.claude]\ncommand = "npx"\nargs = ["@agentclientprotocol/claude-agent-acp"]\n\n` +
        `[agents.local]\ncommand = "./bin/agent"\ncwd = "work"\nroots = ["work", "/srv/shared"]\npermission = "allow_reads"\nmax_active = 2\n`,
    );
    const { agents } = loadConfig(path, {});
    expect(agents).toEqual([
      {
        name: "claude",
        command: "npx",
        args: ["@agentclientprotocol/claude-agent-acp"],
        env: {},
        cwd: tmp.dir,
        roots: [tmp.dir],
        maxActive: 4,
        maxSessions: 20,
        idleReleaseMinutes: 30,
        maxOutputBytes: 1024 * 1024,
        promptTimeoutMinutes: 30,
        permission: "ask",
        permissionTimeoutSeconds: 300,
      },
      expect.objectContaining({
        name: "local",
        command: join(tmp.dir, "bin/agent"),
        cwd: join(tmp.dir, "work"),
        roots: [join(tmp.dir, "work"), "/srv/shared"],
        permission: "allow_reads",
        maxActive: 2,
      }),
    ]);
  });

  it("refuses an [agents.NAME] table without a command, with a bad name or an unknown permission policy", () => {
    const path = tmp.write("bad-agents.toml", `[agents."no good"]\ncommand = "x"\n\n[agents.b]\nargs = []\npermission = "maybe"\n`);
    const error = (() => {
      try {
        loadConfig(path, {});
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    const lines = (error as ConfigError).message;
    expect(lines).toContain('invalid agent name "no good": expected letters, digits');
    expect(lines).toContain("agents.b.command: expected a command");
    expect(lines).toContain('agents.b.permission: expected one of "ask", "allow_reads", "allow", "deny", got string "maybe"');
  });

  it("reads [[mcp_servers]] entries with a name, in file order", () => {
    const path = tmp.write(
      "array.toml",
      `[[mcp_servers]]
name = "zeta"
command = "node"

[[mcp_servers]]
name = "alpha"
url = "http://localhost:3000/mcp"
`,
    );
    const config = loadConfig(path, {});
    expect(config.children.map((c) => [c.name, c.transport])).toEqual([
      ["zeta", "stdio"],
      ["alpha", "http"],
    ]);
    expect(config.children[0]).toEqual(stdioChild("zeta", "node"));
  });

  it("accepts the JSON name mcpServers too", () => {
    const path = tmp.write("camel.toml", `[mcpServers.echo]\ncommand = "node"\n`);
    expect(loadConfig(path, {}).children).toEqual([stdioChild("echo", "node")]);
  });
});

describe("a child's config file", () => {
  it("is kept with the child, so that a command a person is told to run names it", () => {
    const path = tmp.write("in a folder/children_config.toml", '[mcp_servers.docs]\ntype = "http"\nurl = "http://127.0.0.1:9/mcp"\n');
    const [docs] = loadConfig(path, {}).children;
    expect(docs!.configFile).toBe(path);
    expect(signInCommand(docs!)).toBe(`gaggle auth login --config '${path}' docs`);
  });
});

describe("loadConfig: JSON", () => {
  it("reads a Claude-style .mcp.json pasted as is", () => {
    const path = tmp.write(
      "children_config.json",
      JSON.stringify({
        mcpServers: {
          filesystem: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], env: {} },
          linear: { type: "http", url: "https://mcp.linear.app/mcp", headers: { "X-Key": "k" } },
          old: { command: "node_modules/.bin/old", disabled: true },
        },
        gateway: { log_level: "warn" },
      }),
    );
    const config = loadConfig(path, {});
    expect(config.gateway).toEqual({ ...GATEWAY_DEFAULTS, logLevel: "warn" });
    expect(config.children).toEqual([
      stdioChild("filesystem", "npx", { args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] }),
      httpChild("linear", "http", "https://mcp.linear.app/mcp", { headers: { "X-Key": "k" } }),
      stdioChild("old", join(tmp.dir, "node_modules/.bin/old"), { enabled: false }),
    ]);
  });

  it("accepts the TOML name mcp_servers too", () => {
    const path = tmp.write("snake.json", `{"mcp_servers": {"echo": {"command": "node"}}}`);
    expect(loadConfig(path, {}).children).toEqual([stdioChild("echo", "node")]);
  });
});

describe("the first start's time limit", () => {
  const first = (text: string) => validateConfigText(text, join(tmp.dir, "c.toml"), {}).children[0]!;

  it("is longer for a command that fetches what it runs, unless startup_timeout_ms is set", () => {
    expect(first(`[mcp_servers.fs]\ncommand = "npx"\nargs = ["-y", "x"]\n`)).toMatchObject({
      startupTimeoutMs: 30_000,
      firstStartupTimeoutMs: 180_000,
    });
    expect(first(`[mcp_servers.fs]\ncommand = "/usr/bin/uvx"\n`)).toMatchObject({ firstStartupTimeoutMs: 180_000 });
    expect(first(`[mcp_servers.fs]\ncommand = "npx"\nstartup_timeout_ms = 5000\n`)).toMatchObject({
      startupTimeoutMs: 5000,
      firstStartupTimeoutMs: 5000,
    });
    expect(first(`[mcp_servers.fs]\ncommand = "node"\n`)).toMatchObject({ firstStartupTimeoutMs: 30_000 });
  });
});

describe("empty and guessed files", () => {
  it("accepts a config without servers", () => {
    for (const [name, text] of [
      ["empty.toml", ""],
      ["empty.json", "{}"],
      ["none.json", `{"mcpServers": {}}`],
    ] as const) {
      const config = loadConfig(tmp.write(name, text), {});
      expect(config.children).toEqual([]);
      expect(config.gateway).toEqual(GATEWAY_DEFAULTS);
      expect(config.virtual).toEqual({
        ...VIRTUAL_DEFAULTS,
        goose: { ...VIRTUAL_DEFAULTS.goose, cwd: tmp.dir },
        duckdb: { ...VIRTUAL_DEFAULTS.duckdb, roots: [tmp.dir] },
        workspace: { ...VIRTUAL_DEFAULTS.workspace, roots: [tmp.dir] },
      });
    }
  });

  it("guesses the format of other extensions from the content", () => {
    expect(loadConfig(tmp.write("a.conf", `{"mcpServers": {"j": {"command": "node"}}}`), {}).children[0]?.name).toBe("j");
    expect(loadConfig(tmp.write("b.conf", `[mcp_servers.t]\ncommand = "node"\n`), {}).children[0]?.name).toBe("t");
  });

  it("returns an absolute path even for a relative one", () => {
    const config = validateConfigText("", "children_config.toml", {});
    expect(config.path).toBe(join(process.cwd(), "children_config.toml"));
  });
});

describe("transport inference and aliases", () => {
  const transportOf = (entry: string): string | undefined =>
    validateConfigText(`[mcp_servers.x]\n${entry}\n`, join(tmp.dir, "t.toml"), {}).children[0]?.transport;

  it("infers stdio from command and http from url", () => {
    expect(transportOf(`command = "node"`)).toBe("stdio");
    expect(transportOf(`url = "http://localhost:1/mcp"`)).toBe("http");
  });

  it("reads type or transport, with the streamable-http aliases", () => {
    expect(transportOf(`type = "stdio"\ncommand = "node"`)).toBe("stdio");
    expect(transportOf(`transport = "sse"\nurl = "http://h/sse"`)).toBe("sse");
    for (const alias of ["streamable-http", "streamableHttp", "streamable_http"]) {
      expect(transportOf(`type = "${alias}"\nurl = "http://h/mcp"`)).toBe("http");
    }
    expect(transportOf(`type = "http"\ntransport = "streamable-http"\nurl = "http://h/mcp"`)).toBe("http");
  });
});

describe("defaults and paths", () => {
  const child = (entry: string): ChildConfig | undefined =>
    validateConfigText(`[mcp_servers.x]\n${entry}\n`, join(tmp.dir, "sub", "c.toml"), { HOME: "/home/me" }).children[0];

  it("derives max_timeout_ms from timeout_ms", () => {
    expect(child(`command = "n"\ntimeout_ms = 1500`)?.maxTimeoutMs).toBe(15_000);
    expect(child(`command = "n"\ntimeout_ms = 1500\nmax_timeout_ms = 1500`)?.maxTimeoutMs).toBe(1500);
  });

  it("maps enabled and disabled", () => {
    expect(child(`command = "n"\nenabled = false`)?.enabled).toBe(false);
    expect(child(`command = "n"\ndisabled = false`)?.enabled).toBe(true);
  });

  it("resolves relative cwd and command paths against the config file's directory", () => {
    const base = join(tmp.dir, "sub");
    expect(child(`command = "./echo.mjs"`)).toMatchObject({ command: join(base, "echo.mjs"), cwd: base });
    expect(child(`command = "../bin/x"\ncwd = ".."`)).toMatchObject({ command: join(tmp.dir, "bin/x"), cwd: tmp.dir });
    expect(child(`command = "node_modules/.bin/x"`)?.command).toBe(join(base, "node_modules/.bin/x"));
    expect(child(`command = "/usr/bin/env"\ncwd = "/srv"`)).toMatchObject({ command: "/usr/bin/env", cwd: "/srv" });
  });

  it("leaves bare command names for PATH lookup", () => {
    expect(child(`command = "npx"`)?.command).toBe("npx");
    expect(child(`command = "node"`)?.command).toBe("node");
  });

  it("expands ~/ in command and cwd from HOME", () => {
    expect(child(`command = "~/bin/srv"\ncwd = "~/work"`)).toMatchObject({ command: "/home/me/bin/srv", cwd: "/home/me/work" });
    const fallback = validateConfigText(`[mcp_servers.x]\ncommand = "n"\ncwd = "~"\n`, join(tmp.dir, "c.toml"), {});
    expect(fallback.children[0]?.cwd).toBe(homedir());
  });

  it("reads the paths of [gateway] and [virtual.*] as it reads a server's: ~ from HOME, relative ones from the file's folder", () => {
    const base = join(tmp.dir, "sub");
    const config = (text: string) => validateConfigText(text, join(base, "c.toml"), { HOME: "/home/me" });
    /** The five path settings written as given, and read back from the loaded config in the same order. */
    const roundTrip = (stateDir: string, logDir: string, command: string, cwd: string, worktreesDir: string) => {
      const loaded = config(
        `[gateway]\nstate_dir = "${stateDir}"\n[virtual.process]\nlog_dir = "${logDir}"\n` +
          `[virtual.goose]\ncommand = "${command}"\ncwd = "${cwd}"\n[virtual.team]\nworktrees_dir = "${worktreesDir}"\n`,
      );
      const { gateway, virtual } = loaded;
      return [gateway.stateDir, virtual.process.logDir, virtual.goose.command, virtual.goose.cwd, virtual.team.worktreesDir];
    };
    expect(roundTrip("state", "../logs", "bin/goose", "work", "trees")).toEqual([
      join(base, "state"),
      join(tmp.dir, "logs"),
      join(base, "bin/goose"),
      join(base, "work"),
      join(base, "trees"),
    ]);
    expect(roundTrip("~/.gaggle", "~/logs", "~/bin/goose", "~", "~/trees")).toEqual([
      "/home/me/.gaggle",
      "/home/me/logs",
      "/home/me/bin/goose",
      "/home/me",
      "/home/me/trees",
    ]);

    // A bare command is found on PATH; goose works in the config file's folder unless told otherwise.
    expect(config("").virtual.goose).toMatchObject({ command: "goose", cwd: base });
  });
});
