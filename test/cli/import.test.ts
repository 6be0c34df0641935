// `gaggle import` as a person runs it: a home with Claude Code, Codex, Gemini CLI and VS Code configured, the servers
// they list added to gaggle's config, what cannot be added left out with the reason, and the config written only
// when it loads; then an imported server called through gaggle.
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { runCli } from "../helpers/cli.js";
import { CLI, fixture } from "../helpers/paths.js";

/**
 * A person's home and a project folder, with the clients' files `files` (paths from the home, or `project/...`);
 * PROJECT in a file stands for the project's path (~/.claude.json keys a folder's own servers by it). The project's
 * .mcp.json servers are approved in Claude Code unless `files` gives the project's .claude/settings.local.json.
 */
function home(files: Record<string, unknown>): { home: string; project: string; env: NodeJS.ProcessEnv; config: string } {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-import-"));
  const project = join(dir, "project");
  mkdirSync(project);
  // The project's .mcp.json servers approved in Claude Code, unless a test says otherwise.
  for (const [path, content] of Object.entries({ "project/.claude/settings.local.json": { enableAllProjectMcpServers: true }, ...files })) {
    const file = join(dir, path.replaceAll("PROJECT", project));
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, (typeof content === "string" ? content : JSON.stringify(content)).replaceAll("PROJECT", project));
  }
  const env = { PATH: process.env["PATH"], HOME: dir, XDG_CONFIG_HOME: join(dir, ".config") };
  return { home: dir, project, env, config: join(dir, ".config", "gaggle", "children_config.toml") };
}

const ECHO = { command: process.execPath, args: [fixture("echo.mjs")] };

describe("gaggle import", () => {
  it("says what each client lists, and the command that adds it, when given no source", async () => {
    const h = home({
      ".claude.json": { mcpServers: { memory: ECHO }, projects: { PROJECT: { mcpServers: { mine: ECHO } } } },
      ".codex/config.toml": '[mcp_servers.github]\ncommand = "npx"\n',
      "project/.vscode/mcp.json": { servers: { vs: ECHO } },
    });
    const run = await runCli(["import"], { cwd: h.project, env: h.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Claude Code (gaggle import claude-code):");
    expect(run.stdout).toMatch(/\.claude\.json \(user\): memory\n/);
    expect(run.stdout).toMatch(/\.claude\.json \(local\): mine\n/);
    expect(run.stdout).toMatch(/Codex \(gaggle import codex\):\n.*config\.toml \(user\): github\n/);
    expect(run.stdout).toContain("VS Code (gaggle import vscode):\n  .vscode/mcp.json (project): vs\n");
    expect(run.stdout).toContain("add them to gaggle's config: gaggle import claude-code codex vscode");
    expect(() => statSync(h.config)).toThrow();
  });

  it("names gaggle's own entry in a client as left out, and suggests no import of a client that lists only it", async () => {
    const itself = { command: process.execPath, args: [CLI, "--config", "x.toml"] };
    const h = home({
      ".codex/config.toml": `[mcp_servers.gaggle]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(CLI)}]\n`,
      ".gemini/settings.json": { mcpServers: { gaggle: itself, vs: ECHO } },
      ".cursor/mcp.json": {
        mcpServers: {
          fetched: { command: "npx", args: ["-y", "mcp-gaggle@latest"] },
          named: { command: "/usr/local/bin/gaggle" },
          data: { ...ECHO, args: [...ECHO.args, "--data", "/srv/gaggle"] },
        },
      },
    });
    const run = await runCli(["import"], { cwd: h.project, env: h.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Codex \(gaggle import codex\):\n.*config\.toml \(user\): gaggle \(gaggle itself, left out\)\n/);
    expect(run.stdout).toMatch(/settings\.json \(user\): gaggle \(gaggle itself, left out\), vs\n/);
    // A server whose data folder is named gaggle is not gaggle.
    expect(run.stdout).toMatch(/mcp\.json \(user\): fetched \(gaggle itself, left out\), named \(gaggle itself, left out\), data\n/);
    expect(run.stdout).toContain("add them to gaggle's config: gaggle import gemini cursor (");
  });

  it("adds every client's servers in gaggle's keys, leaves out what it cannot add with the reason, and writes a config that loads", async () => {
    const h = home({
      ".claude.json": {
        mcpServers: {
          memory: { type: "stdio", ...ECHO, env: { MEMORY_FILE_PATH: "${HOME}/memory.jsonl" } },
          docs: { type: "http", url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer ${GAGGLE_TEST_DOCS_TOKEN}" } },
          itself: { command: process.execPath, args: [CLI, "--config", "x.toml"] },
        },
      },
      "project/.mcp.json": { mcpServers: { tool: { command: "node", args: ["server.js"] }, broken: { command: "node", args: "server.js" } } },
      ".codex/config.toml":
        '[mcp_servers.github]\ncommand = "npx"\nargs = ["-y", "server-github"]\nenv_vars = ["GITHUB_TOKEN"]\nstartup_timeout_sec = 20\ntool_timeout_sec = 90\n' +
        '[mcp_servers.remote]\nurl = "https://remote.example.com/mcp"\nbearer_token_env_var = "REMOTE_TOKEN"\nenabled_tools = ["search"]\n' +
        '[mcp_servers.memory]\ncommand = "npx"\n',
      ".gemini/settings.json": {
        mcpServers: { web: { httpUrl: "https://web.example.com/mcp", timeout: 30000, trust: true, excludeTools: ["delete"] } },
      },
      "project/.vscode/mcp.json": {
        servers: {
          vs: { type: "stdio", command: "node", args: ["${workspaceFolder}/s.js"], env: { HOME_TOO: "${env:HOME}" } },
          asks: { type: "http", url: "https://asks.example.com/mcp", headers: { "X-Key": "${input:key}" } },
        },
      },
    });
    const run = await runCli(["import", "claude-code", "codex", "gemini", "vscode"], { cwd: h.project, env: h.env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\(user\): left out itself: it runs gaggle itself\n/);
    expect(run.stdout).toContain("docs needs GAGGLE_TEST_DOCS_TOKEN set where gaggle runs (not set in this shell)");
    expect(run.stdout).toMatch(/\.mcp\.json \(project\): left out broken: args: expected an array of strings/);
    expect(run.stdout).toMatch(/config\.toml \(user\): left out memory: a server of that name is added from Claude Code already\n/);
    expect(run.stdout).toMatch(/settings\.json \(user\): added web \(left out trust: gaggle has no equal\)\n/);
    expect(run.stdout).toMatch(/left out asks: it asks VS Code for \$\{input:key\} when it starts; add it by hand with the value\n/);
    expect(run.stdout).toContain("added 7 server(s) to");
    expect(run.stdout).toContain(
      "claude mcp remove memory --scope user; claude mcp remove docs --scope user; claude mcp remove tool --scope project",
    );
    expect(run.stdout).toContain("codex mcp remove github; codex mcp remove remote");
    expect(statSync(h.config).mode & 0o777).toBe(0o600);

    const config = loadConfig(h.config, { ...h.env, GAGGLE_TEST_DOCS_TOKEN: "t", REMOTE_TOKEN: "r" });
    const child = (name: string) => config.children.find((one) => one.name === name)!;
    expect(config.children.map((one) => one.name)).toEqual(["memory", "docs", "tool", "github", "remote", "web", "vs"]);
    expect(child("memory")).toMatchObject({ command: process.execPath, args: ECHO.args, env: { MEMORY_FILE_PATH: `${h.home}/memory.jsonl` } });
    expect(child("docs")).toMatchObject({ transport: "http", url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer t" } });
    // A project's server runs in the project's folder, as its client runs it.
    expect(child("tool")).toMatchObject({ command: "node", args: ["server.js"], cwd: h.project });
    expect(child("github")).toMatchObject({ startupTimeoutMs: 20_000, timeoutMs: 90_000 });
    expect(child("remote")).toMatchObject({ headers: { Authorization: "Bearer r" }, tools: { allow: ["search"] } });
    expect(child("web")).toMatchObject({ transport: "http", url: "https://web.example.com/mcp", timeoutMs: 30_000, tools: { deny: ["delete"] } });
    expect(child("vs")).toMatchObject({ args: [`${h.project}/s.js`], env: { HOME_TOO: h.home }, cwd: h.project });
  });

  it("reads each editor's variables and Gemini CLI's $NAME and SSE url as that client does", async () => {
    const h = home({
      ".gemini/settings.json": {
        mcpServers: { events: { url: "https://events.example.com/sse", headers: { Authorization: "Bearer $EVENTS_TOKEN" } } },
      },
      "project/.cursor/mcp.json": {
        mcpServers: {
          cur: { command: "node", args: ["${workspaceFolder}/s.js", "${userHome}/data"], env: { KEY: "${env:CURSOR_KEY}" } },
        },
      },
      ".codeium/windsurf/mcp_config.json": {
        mcpServers: {
          wind: { serverUrl: "https://wind.example.com/mcp", headers: { Authorization: "Bearer ${env:WIND_TOKEN}" } },
          open: { command: "node", args: ["${workspaceFolder}/s.js"] },
        },
      },
    });
    const run = await runCli(["import", "gemini", "cursor", "windsurf"], { cwd: h.project, env: h.env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("events needs EVENTS_TOKEN set where gaggle runs");
    expect(run.stdout).toContain("cur needs CURSOR_KEY set where gaggle runs");
    expect(run.stdout).toContain("wind needs WIND_TOKEN set where gaggle runs");
    expect(run.stdout).toContain(
      "left out open: it names ${workspaceFolder}, the folder the editor has open, which gaggle has not; add it by hand with a folder",
    );
    const config = loadConfig(h.config, { ...h.env, EVENTS_TOKEN: "e", CURSOR_KEY: "c", WIND_TOKEN: "w" });
    const child = (name: string) => config.children.find((one) => one.name === name)!;
    expect(child("events")).toMatchObject({ transport: "sse", headers: { Authorization: "Bearer e" } });
    expect(child("cur")).toMatchObject({ args: [`${h.project}/s.js`, `${h.home}/data`], env: { KEY: "c" }, cwd: h.project });
    expect(child("wind")).toMatchObject({ transport: "http", url: "https://wind.example.com/mcp", headers: { Authorization: "Bearer w" } });
  });

  it("reads VS Code's, Gemini CLI's, Cursor's and Windsurf's files past comments and trailing commas, and Claude Code's as plain JSON", async () => {
    const command = JSON.stringify(process.execPath);
    const echo = JSON.stringify(fixture("echo.mjs"));
    // Strings that hold what would be a comment outside one stay as they are.
    const words = '"http://a//b", "/* not a comment */", "x,]"';
    const h = home({
      "project/.vscode/mcp.json": `{\n  // the project's servers\n  "servers": {\n    "vs": { "command": ${command}, "args": [${echo}, ${words},], /* echo */ },\n  },\n}\n`,
      ".gemini/settings.json": `{\r\n  /* mine\r\n     all of it */\r\n  "theme": "dark", // dark\r\n  "mcpServers": { "gem": { "command": ${command}, "args": [${echo}] } }\r\n}\r\n`,
      ".cursor/mcp.json": `{ "mcpServers": { "cur": { "command": ${command}, "args": [${echo}], }, }, } // end`,
      ".codeium/windsurf/mcp_config.json": `// Windsurf\n{ "mcpServers": { "wind": { "serverUrl": "https://wind.example.com/mcp" /* remote */ } } }`,
      "project/.mcp.json": `{\n  // shared\n  "mcpServers": { "shared": { "command": ${command} } }\n}\n`,
    });
    const run = await runCli(["import", "vscode", "gemini", "cursor", "windsurf", "claude-code"], { cwd: h.project, env: h.env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /\.mcp\.json \(project\): not read: \S*\.mcp\.json:2:3: JSON syntax error: JSON allows no comments: remove it; correct it, then run gaggle import again\n/,
    );
    const children = loadConfig(h.config, h.env).children;
    expect(children.map((child) => child.name)).toEqual(["vs", "gem", "cur", "wind"]);
    expect(children[0]).toMatchObject({ args: [fixture("echo.mjs"), "http://a//b", "/* not a comment */", "x,]"] });
    const call = await runCli(["call", "gem", "echo", JSON.stringify({ text: "past the comments" }), "--config", h.config], {
      cwd: h.home,
      env: h.env,
    });
    expect(call.stdout).toContain("past the comments");
  });

  it("says where a file read past comments is broken, and what to do", async () => {
    const h = home({
      "project/.vscode/mcp.json": '{\n  "servers": {\n    /* open\n  }\n}\n',
      ".gemini/settings.json": '{\n  // mine\n  "mcpServers": { "a": { "command": "x" } "b": {} }\n}\n',
      ".cursor/mcp.json": '{ "mcpServers": { "a": { "command": "x",, } } }',
    });
    const run = await runCli(["import", "vscode", "gemini", "cursor"], { cwd: h.project, env: h.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /mcp\.json \(project\): not read: \S*mcp\.json:3:5: JSON syntax error: a comment opened here is not closed: end it with \*\/; correct it, then run gaggle import again\n/,
    );
    expect(run.stdout).toMatch(
      /settings\.json \(user\): not read: \S*settings\.json:3:43: JSON syntax error: .*; correct it, then run gaggle import again\n/,
    );
    expect(run.stdout).toMatch(/mcp\.json \(user\): not read: \S*mcp\.json:1:41: JSON syntax error: .*; correct it, then run gaggle import again\n/);
    expect(run.stdout).toContain("nothing to add to");
  });

  it("gives a project's stdio servers the CLAUDE_PROJECT_DIR Claude Code gives them, unless they set it", async () => {
    const h = home({ ".claude.json": { mcpServers: { user: ECHO }, projects: { PROJECT: { mcpServers: { local: ECHO } } } } });
    // Written here: the helper would read the variable's name as the project's path.
    const own = { ...ECHO, env: { CLAUDE_PROJECT_DIR: "${HOME}/elsewhere" } };
    const web = { type: "http", url: "https://web.example.com/mcp" };
    writeFileSync(join(h.project, ".mcp.json"), JSON.stringify({ mcpServers: { shared: ECHO, own, web } }));
    const config = join(h.project, "children_config.toml");
    writeFileSync(config, "");
    chmodSync(config, 0o644);
    const dry = await runCli(["import", "claude-code", "--dry-run"], { cwd: h.project, env: h.env });
    expect(dry.code).toBe(0);
    // The project's folder is gaggle's value, no secret of the client's file.
    expect(dry.stdout).toContain(`CLAUDE_PROJECT_DIR = ${JSON.stringify(h.project)}`);
    const run = await runCli(["import", "claude-code"], { cwd: h.project, env: h.env });
    expect(run.code).toBe(0);
    expect(statSync(config).mode & 0o777).toBe(0o644);
    const children = loadConfig(config, h.env).children;
    const env = (name: string) => children.find((child) => child.name === name)?.env ?? {};
    expect(children.map((child) => child.name)).toEqual(["user", "local", "shared", "own", "web"]);
    expect(env("user")).not.toHaveProperty("CLAUDE_PROJECT_DIR");
    expect(env("local")).toEqual({ CLAUDE_PROJECT_DIR: h.project });
    expect(env("shared")).toEqual({ CLAUDE_PROJECT_DIR: h.project });
    expect(env("own")).toEqual({ CLAUDE_PROJECT_DIR: `${h.home}/elsewhere` });
    expect(env("web")).toEqual({});
    // From another folder, the server still finds its project as under Claude Code.
    const call = await runCli(["call", "shared", "env", JSON.stringify({ name: "CLAUDE_PROJECT_DIR" }), "--config", config], {
      cwd: h.home,
      env: h.env,
    });
    expect(call.stdout).toContain(h.project);
  });

  it("reads a project's relative cwd and command from the project's folder, where its client runs it", async () => {
    const h = home({
      "project/.mcp.json": { mcpServers: { rel: { command: "./echo.sh", cwd: "tools" } } },
      "project/tools/echo.sh": `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(fixture("echo.mjs"))}\n`,
    });
    chmodSync(join(h.project, "tools", "echo.sh"), 0o755);
    const run = await runCli(["import", "claude-code"], { cwd: h.project, env: h.env });
    expect(run.code).toBe(0);
    const config = loadConfig(h.config, h.env);
    expect(config.children[0]).toMatchObject({ command: join(h.project, "tools", "echo.sh"), cwd: join(h.project, "tools") });
    const call = await runCli(["call", "rel", "echo", JSON.stringify({ text: "from the project" }), "--config", h.config], {
      cwd: h.home,
      env: h.env,
    });
    expect(call.stdout).toContain("from the project");
  });

  it("shows in a dry run the servers it would add, never a secret of theirs or of the config", async () => {
    const secret = "sk-live-0123456789abcdef0123456789abcdef";
    const h = home({
      "project/.mcp.json": {
        mcpServers: {
          echo: { ...ECHO, env: { API_KEY: secret, HOME_DIR: "${HOME}" } },
          web: { url: "https://w.example.com/mcp", headers: { Authorization: `Bearer ${secret}` } },
        },
      },
    });
    const token = "t0k3n-0123456789abcdef0123456789abcdef01";
    const config = join(h.project, "children_config.json");
    writeFileSync(config, JSON.stringify({ gateway: { auth_tokens: { alice: token } }, mcpServers: { first: ECHO } }));
    const dry = await runCli(["import", "claude-code", "--dry-run"], { cwd: h.project, env: h.env });
    expect(dry.code).toBe(0);
    expect(dry.stdout).not.toContain(secret);
    expect(dry.stdout).not.toContain(token);
    expect(dry.stdout).toContain('"API_KEY": "[hidden]"');
    expect(dry.stdout).toContain('"HOME_DIR": "${HOME}"');
    expect(dry.stdout).toContain('"Authorization": "[hidden]"');
  });

  it("leaves out a server that clashes with the config's, and adds the rest", async () => {
    const h = home({ "project/.mcp.json": { mcpServers: { github: ECHO, echo: ECHO } } });
    const config = join(h.project, "children_config.toml");
    writeFileSync(config, `[gateway]\nexpose = "tools"\n[mcp_servers.mine]\ncommand = "node"\nprefix = "github"\n`);
    const run = await runCli(["import", "claude-code"], { cwd: h.project, env: h.env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/left out github: mcp_servers\.github\.prefix: exposed tool names of "github" collide with those of "mine"/);
    expect(loadConfig(config, h.env).children.map((one) => one.name)).toEqual(["mine", "echo"]);
  });

  it("makes a config readable by its owner alone when it adds a secret written out in a client's file", async () => {
    const h = home({ "project/.mcp.json": { mcpServers: { echo: { ...ECHO, env: { API_KEY: "sk-0123456789" } } } } });
    const config = join(h.project, "children_config.toml");
    writeFileSync(config, "");
    chmodSync(config, 0o644);
    const run = await runCli(["import", "claude-code"], { cwd: h.project, env: h.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("children_config.toml is now readable by you alone: it holds env or header values written out, not as ${VAR}");
    expect(statSync(config).mode & 0o777).toBe(0o600);
  });

  it("appends to a TOML config under its comments, leaves out a name it has, and a dry run writes nothing", async () => {
    const h = home({ "project/.mcp.json": { mcpServers: { echo: ECHO, kept: { command: "other" } } } });
    const config = join(h.project, "children_config.toml");
    const before = '# my servers\n[mcp_servers.kept]\ncommand = "mine" # the one I keep\n';
    writeFileSync(config, before);
    chmodSync(config, 0o640);

    const dry = await runCli(["import", "claude-code", "--dry-run"], { cwd: h.project, env: h.env });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/left out kept: a server named kept is already in .*children_config\.toml\n/);
    expect(dry.stdout).toContain(`[mcp_servers.echo]\ncommand = ${JSON.stringify(process.execPath)}`);
    expect(dry.stdout).toContain("(--dry-run: children_config.toml left as it is)");
    expect(readFileSync(config, "utf8")).toBe(before);

    const run = await runCli(["import", "claude-code"], { cwd: h.project, env: h.env });
    expect(run.code).toBe(0);
    const text = readFileSync(config, "utf8");
    expect(text.startsWith(before)).toBe(true);
    expect(text).toContain("# From Claude Code: ");
    expect(statSync(config).mode & 0o777).toBe(0o640);
    // The imported server answers through gaggle.
    const call = await runCli(["call", "echo", "echo", JSON.stringify({ text: "imported" }), "--config", config], { cwd: h.project, env: h.env });
    expect(call.stderr).not.toContain("error");
    expect(call.stdout).toContain("imported");
  });

  it("adds to a JSON config under its mcpServers, through a link to it", async () => {
    const h = home({ "servers.json": { mcpServers: { echo: ECHO } } });
    const config = join(h.home, "dotfiles", "children_config.json");
    mkdirSync(join(h.home, "dotfiles"));
    writeFileSync(config, JSON.stringify({ mcpServers: { first: ECHO } }));
    const link = join(h.project, "children_config.json");
    symlinkSync(config, link);
    const run = await runCli(["import", join(h.home, "servers.json")], { cwd: h.project, env: h.env });
    expect(run.code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(config, "utf8"))).toEqual({ mcpServers: { first: ECHO, echo: ECHO } });
  });

  it("adds to a config that lists its servers as an array, or under mcpServers, in the form it has, losing none", async () => {
    const h = home({ "servers.json": { mcpServers: { echo: ECHO } } });
    const json = join(h.project, "list.json");
    writeFileSync(json, JSON.stringify({ mcp_servers: [{ name: "first", ...ECHO }] }));
    const toml = join(h.project, "list.toml");
    writeFileSync(toml, `[[mcp_servers]]\nname = "first"\ncommand = ${JSON.stringify(process.execPath)}\n`);
    const camel = join(h.project, "camel.toml");
    writeFileSync(camel, `[mcpServers.first]\ncommand = ${JSON.stringify(process.execPath)}\n`);
    for (const config of [json, toml, camel]) {
      const run = await runCli(["import", join(h.home, "servers.json"), "--config", config], { cwd: h.project, env: h.env });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(loadConfig(config, h.env).children.map((one) => one.name)).toEqual(["first", "echo"]);
    }
    expect(JSON.parse(readFileSync(json, "utf8"))).toEqual({
      mcp_servers: [
        { name: "first", ...ECHO },
        { name: "echo", ...ECHO },
      ],
    });
  });

  it("says which file does not parse and where, names an unknown source, and never adds to a config that does not load", async () => {
    const h = home({ "project/.mcp.json": '{"mcpServers": {"a": }' });
    const unread = await runCli(["import", "claude-code"], { cwd: h.project, env: h.env });
    expect(unread.code).toBe(0);
    expect(unread.stdout).toMatch(/\.mcp\.json \(project\): not read: .*\.mcp\.json:1:\d+: JSON syntax error/);
    expect(unread.stdout).toContain("nothing to add to");

    const folder = await runCli(["import", "claude-code", "--config", h.project], { cwd: h.project, env: h.env });
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain("project is not a file: give --config the path of a .toml or .json config file");

    const unknown = await runCli(["import", "claud-code"], { cwd: h.project, env: h.env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown source "claud-code"; did you mean "claude-code"?');

    const missing = await runCli(["import", "./nowhere.json", `${h.project}/`], { cwd: h.project, env: h.env });
    expect(missing.code).toBe(0);
    expect(missing.stdout).toMatch(/^nowhere\.json: not read: no such file\n/m);
    expect(missing.stdout).toMatch(/^\S*project: not read: a folder, not a config file: give the path of a client's \.json or \.toml file\n/m);

    writeFileSync(join(h.project, ".mcp.json"), JSON.stringify({ mcpServers: { echo: ECHO } }));
    const config = join(h.project, "children_config.toml");
    writeFileSync(config, "[mcp_servers.bad]\ncommand = 3\n");
    const refused = await runCli(["import", "claude-code"], { cwd: h.project, env: h.env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/the config .*children_config\.toml does not load, so nothing is added to it:\n.*mcp_servers\.bad\.command/);
    expect(readFileSync(config, "utf8")).toBe("[mcp_servers.bad]\ncommand = 3\n");

    const inline = join(h.project, "inline.toml");
    writeFileSync(inline, 'mcp_servers = { a = { command = "x" } }\n');
    const appended = await runCli(["import", "claude-code", "--config", inline], { cwd: h.project, env: h.env });
    expect(appended.code).toBe(2);
    expect(appended.stderr).toContain("inline.toml writes its servers table inline (mcp_servers = { ... })");
    expect(readFileSync(inline, "utf8")).toBe('mcp_servers = { a = { command = "x" } }\n');

    const twice = join(h.project, "twice.json");
    const written = `{"mcpServers": {"a": {"command": "x"}}, "mcpServers": {"b": {"command": "y"}}}`;
    writeFileSync(twice, written);
    const duplicate = await runCli(["import", "claude-code", "--config", twice], { cwd: h.project, env: h.env });
    expect(duplicate.code).toBe(2);
    expect(duplicate.stderr).toMatch(/twice\.json does not load, so nothing is added to it:\n.*mcpServers/);
    expect(readFileSync(twice, "utf8")).toBe(written);
  });

  it("leaves out a project's server declined in Claude Code, and adds one not yet approved disabled", async () => {
    const h = home({
      "project/.claude/settings.local.json": {},
      ".claude.json": { projects: { PROJECT: { enabledMcpjsonServers: ["approved"], disabledMcpjsonServers: ["declined"] } } },
      "project/.mcp.json": { mcpServers: { approved: ECHO, declined: ECHO, pending: ECHO } },
    });
    const run = await runCli(["import", "claude-code"], { cwd: h.project, env: h.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\(project\): added approved\n/);
    expect(run.stdout).toMatch(/\(project\): left out declined: it was declined in Claude Code \(disabledMcpjsonServers\)\n/);
    expect(run.stdout).toMatch(
      /\(project\): added pending, disabled: Claude Code has not been told to run it yet; set enabled = true once you trust it\n/,
    );
    const children = loadConfig(h.config, h.env).children;
    expect(children.map((child) => [child.name, child.enabled])).toEqual([
      ["approved", true],
      ["pending", false],
    ]);
  });
});
