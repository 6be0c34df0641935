import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, type CliRun } from "../helpers/cli.js";
import { writeConfig } from "../helpers/gaggle.js";
import { ROOT, fixture, fixtureChild } from "../helpers/paths.js";
import { isAlive } from "../helpers/processes.js";

/** A temp dir (realpath, so it matches what the CLI prints) used as HOME and XDG_CONFIG_HOME: no stray configs. */
const isolated = () => realpathSync(mkdtempSync(join(tmpdir(), "gaggle-cli-")));

/** PATH holds only Node's folder: no Goose there, so the goose and team children are left out, on any machine. */
function gaggle(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  const home = isolated();
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: home, PATH: dirname(process.execPath), ...options.env };
  return runCli(args, { cwd: options.cwd ?? home, env });
}

function write(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const ECHO_JSON = (name: string) => JSON.stringify({ mcpServers: { [name]: { command: process.execPath, args: [fixture("echo.mjs")] } } });
const echoConfig = writeConfig([fixtureChild("echo", "echo.mjs"), fixtureChild("spare", "echo.mjs")].join("\n"));

describe("flags", () => {
  it("--version prints the package.json version", async () => {
    const { version } = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { version: string };
    for (const flag of ["--version", "-v"]) expect(await gaggle([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("--help lists every subcommand and option", async () => {
    const { code, stdout } = await gaggle(["--help"]);
    expect(code).toBe(0);
    for (const command of ["validate", "list", "schema SERVER [TOOL]", "call SERVER TOOL [JSON_ARGS]", "status [SERVER]"]) {
      expect(stdout).toContain(`gaggle ${command}`);
    }
    for (const option of ["--config", "--log-level", "--version", "--help"]) expect(stdout).toContain(option);
  });

  it("exits 2 on an unknown command or a bad --log-level, pointing at the fix", async () => {
    const command = await gaggle(["frobnicate", "--config", echoConfig]);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('unknown command "frobnicate"; see gaggle --help');
    const typo = await gaggle(["lst", "--config", echoConfig]);
    expect(typo).toMatchObject({ code: 2, stderr: 'gaggle: unknown command "lst"; did you mean "gaggle list"? see gaggle --help\n' });
    expect((await gaggle(["valdate"])).stderr).toContain('did you mean "gaggle validate"?');
    const level = await gaggle(["list", "--log-level", "loud", "--config", echoConfig]);
    expect(level.code).toBe(2);
    expect(level.stderr).toContain('--log-level must be one of fatal, error, warn, info, debug, trace, silent; got "loud"');
  });

  it("refuses a config file given as an operand, or an operand too many, instead of checking another file", async () => {
    // A children_config.toml of its own in the folder: the file an ignored operand would have had checked.
    const cwd = isolated();
    write(cwd, "children_config.toml", "[mcp_servers.here]\nurl = 3\n");
    write(cwd, "mine.toml", "");
    const file = await gaggle(["validate", "mine.toml"], { cwd });
    expect(file).toMatchObject({
      code: 2,
      stdout: "",
      stderr: "gaggle: validate takes the config file with --config: gaggle validate --config mine.toml\n",
    });
    expect((await gaggle(["doctor", "mine.toml"], { cwd })).stderr).toBe(
      "gaggle: doctor takes the config file with --config: gaggle doctor --config mine.toml\n",
    );
    expect((await gaggle(["mine.toml"], { cwd })).stderr).toBe(
      'gaggle: unknown command "mine.toml"; to serve that config file, give it with --config: gaggle --config mine.toml\n',
    );
    const extra = await gaggle(["list", "echo", "--config", echoConfig]);
    expect(extra).toMatchObject({ code: 2, stdout: "", stderr: 'gaggle: list takes no operand; "echo" is one too many; see gaggle --help\n' });
    expect((await gaggle(["schema", "echo", "echo", "more", "--config", echoConfig])).stderr).toBe(
      'gaggle: schema takes at most 2 operand(s); "more" is one too many; see gaggle --help\n',
    );
    // A tool's name and its arguments may hold a dot; the server's may not.
    const call = await gaggle(["call", "echo", "echo", '{"text": "a.json"}', "--config", echoConfig]);
    expect(call).toMatchObject({ code: 0, stdout: "a.json\n" });
  });

  it("exits 2 on an unknown option, like every other usage error, naming the option meant when one is near", async () => {
    const option = await gaggle(["list", "--bogus", "--config", echoConfig]);
    expect(option).toMatchObject({ code: 2, stdout: "", stderr: 'gaggle: unknown option "--bogus"; see gaggle --help\n' });
    const typo = await gaggle(["--confg", echoConfig]);
    expect(typo).toMatchObject({ code: 2, stdout: "", stderr: 'gaggle: unknown option "--confg"; did you mean "--config"? see gaggle --help\n' });
    expect((await gaggle(["status", "--jsn", "--config", echoConfig])).stderr).toContain('did you mean "--json"?');
    expect((await gaggle(["list", "-x", "--config", echoConfig])).stderr).toBe('gaggle: unknown option "-x"; see gaggle --help\n');
    // The daemon's own option is not offered to a person.
    expect((await gaggle(["--daemonn", "k"])).stderr).toBe('gaggle: unknown option "--daemonn"; see gaggle --help\n');
  });
});

describe("validate", () => {
  it("exits 1 when the process policy is invalid, saying every command would be refused", async () => {
    const path = writeConfig(`[virtual.process.policy]\nallow = 3\n`);
    const { code, stdout, stderr } = await gaggle(["validate", "--config", path]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("the process policy is invalid, so every command would be refused");
    // The file first, as every other error of validate names it.
    const prefix = `gaggle: ${path}: [virtual.process.policy]: `;
    expect(stderr.slice(0, prefix.length)).toBe(prefix);
  });

  it("exits 0 with a one-line summary on a good file", async () => {
    const path = writeConfig(`${fixtureChild("a", "echo.mjs")}\n${fixtureChild("b", "echo.mjs", "enabled = false")}`);
    expect(await gaggle(["validate", "--config", path])).toEqual({
      code: 0,
      stdout: `${path}: valid; 2 child server(s), 1 enabled; 1 built-in (process)\n`,
      stderr: "",
    });
  });

  it("exits 1 and prints every error with the file name and key path on stderr", async () => {
    const dir = isolated();
    write(
      dir,
      "bad.toml",
      [
        '[mcp_servers.one]\ncommand = "node"\ntimeout_ms = -5\nargs = "x"\n',
        '[mcp_servers.two]\nurl = "ftp://nope"\ncolour = "blue"\n',
        '[gateway]\nlog_level = "loud"\n',
      ].join("\n"),
    );
    const { code, stdout, stderr } = await gaggle(["validate", "--config", "bad.toml"], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    for (const line of [
      'bad.toml: mcp_servers.one.args: expected an array of strings, got string "x"',
      "bad.toml: mcp_servers.one.timeout_ms: expected a positive integer, got number -5",
      'bad.toml: mcp_servers.two.url: expected an http(s) URL, got string "ftp://nope"',
      "bad.toml: mcp_servers.two.colour: unknown key",
      'bad.toml: gateway.log_level: expected one of "fatal"',
    ]) {
      expect(stderr).toContain(line);
    }
  });

  it("exits 1 naming the path when --config points at nothing", async () => {
    const { code, stderr } = await gaggle(["validate", "--config", "missing.toml"], { cwd: isolated() });
    expect(code).toBe(1);
    expect(stderr).toBe("gaggle: missing.toml: config file not found: check the path given to --config\n");
  });
});

describe("one-shot commands against the echo fixture", () => {
  it("list names every child", async () => {
    const { code, stdout } = await gaggle(["list", "--config", echoConfig]);
    expect(code).toBe(0);
    expectConfigured(JSON.parse(stdout), ["echo", "spare"]);
  });

  it("schema shows a child's tools, or one tool", async () => {
    const all = await gaggle(["schema", "echo", "--config", echoConfig]);
    expect(all.code).toBe(0);
    expect((JSON.parse(all.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["echo", "add", "lines"]),
    );
    const one = await gaggle(["schema", "echo", "add", "--config", echoConfig]);
    expect(JSON.parse(one.stdout)).toMatchObject({ server_id: "echo", tool: { name: "add", outputSchema: expect.any(Object) } });
  });

  it("call passes JSON arguments and prints the result, then leaves no child behind", async () => {
    // Each run is a gaggle of its own: they run at once, and are checked in turn.
    const [text, sum, pid] = await Promise.all([
      gaggle(["call", "echo", "echo", '{"text": "hi there"}', "--config", echoConfig]),
      gaggle(["call", "echo", "add", '{"a": 2, "b": 3}', "--config", echoConfig]),
      gaggle(["call", "echo", "pid", "--config", echoConfig]),
    ]);
    expect(text).toMatchObject({ code: 0, stdout: "hi there\n" });
    expect(sum.stdout).toContain('"sum": 5');
    expect(pid.code).toBe(0);
    expect(isAlive(Number(pid.stdout.trim()))).toBe(false);
  });

  it("call prints a result once: the text, not the text and then the same structure again", async () => {
    const out = await gaggle(["call", "echo", "add", '{"a": 1, "b": 2}', "--config", echoConfig]);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ sum: 3 });
  });

  it("call prints a result that has no content array, as some children write it", async () => {
    const rawConfig = writeConfig(fixtureChild("raw", "raw-server.mjs"));
    expect(await gaggle(["call", "raw", "no_content", "--config", rawConfig])).toMatchObject({
      code: 0,
      stdout: `${JSON.stringify({ structuredContent: { n: 1 } }, null, 2)}\n`,
    });
  });

  it("call says clearly when JSON_ARGS is not JSON, and exits 1 on a failed call", async () => {
    const bad = await gaggle(["call", "echo", "echo", "{text: hi}", "--config", echoConfig]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("JSON_ARGS is not valid JSON");
    expect(bad.stderr).toContain(`gaggle call SERVER TOOL '{"text": "hi"}'`);
    const missing = await gaggle(["call", "echo", "nope", "--config", echoConfig]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ status: "failed", code: "TOOL_NOT_FOUND" });
  });

  it("hints name the commands a shell user runs, never a meta-tool", async () => {
    const cases: Array<[string[], string, string]> = [
      [["call", "echo", "add", '{"a": 1}'], "INVALID_ARGS", "`gaggle schema echo add` shows its input schema"],
      [["call", "echo", "ad"], "TOOL_NOT_FOUND", 'did you mean "add"? `gaggle schema echo` lists its tools'],
      [["call", "ecko", "add"], "SERVER_NOT_FOUND", 'did you mean "echo"? `gaggle list` names every child'],
    ];
    // Each run is a gaggle of its own: they run at once, and are checked in turn.
    const brokenRun = gaggle(["call", "broken", "anything", "--config", writeConfig(fixtureChild("broken", "exit-at-start.mjs"))]);
    const runs = await Promise.all(cases.map(([args]) => gaggle([...args, "--config", echoConfig])));
    for (const [i, [, code, hint]] of cases.entries()) {
      const run = runs[i]!;
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout)).toMatchObject({ code, hint });
      expect(run.stdout).not.toMatch(/get_schema|list_registered_children/);
    }
    // A child that fails to start: where its stderr is shown, in a shell.
    const broken = await brokenRun;
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout)).toMatchObject({
      code: "SERVER_FAILED",
      hint: "check the command, args and env of broken in the config; `gaggle doctor broken` starts it and shows its stderr",
    });
    expect(broken.stdout).not.toContain("get_child_status");
  });

  it("call refuses a background process, which would die with the command, and says where it can run", async () => {
    const config = writeConfig("[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n");
    const refused = await gaggle(["call", "process", "gg_process_run", '{"command": "sleep 321"}', "--config", config]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      code: "INVALID_ARGS",
      error: "a background process would be killed as soon as this command exits: gaggle call ends when the call does",
      hint: expect.stringContaining("run it through a running gaggle"),
    });
  });

  it("status prints a table of the children, or one JSON document with --json, and names CLI commands", async () => {
    const table = await gaggle(["status", "--config", echoConfig]);
    expect(table.code).toBe(0);
    const lines = table.stdout.split("\n");
    expect(lines[0]).toMatch(/^NAME +TRANSPORT +STATE +TOOLS$/);
    // The configured children first, then the built-in virtual ones.
    expect(lines[1]).toMatch(/^echo +stdio +not started +(\?|10)$/);
    expect(lines[2]).toMatch(/^spare +stdio +not started +(\?|10)$/);
    expect(lines[3]).toMatch(/^process +virtual +built in +3$/);
    expect(table.stdout).toContain("gaggle doctor starts them");
    expect(table.stdout).not.toMatch(/execute_child_tool|get_child_status|list_registered_children/);

    const one = await gaggle(["status", "echo", "--json", "--config", echoConfig]);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual({
      children: [expect.objectContaining({ server_id: "echo", status: "not_started", transport: "stdio", pid: null })],
    });
    const wrong = await gaggle(["status", "ecko", "--config", echoConfig]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('no child server named "ecko"; did you mean "echo"? (gaggle list shows them)');
  });
});

describe("config discovery", () => {
  it("uses ./children_config.json and says so on stderr", async () => {
    const dir = isolated();
    const path = write(dir, "children_config.json", ECHO_JSON("from_json"));
    const { code, stdout, stderr } = await gaggle(["list"], { cwd: dir });
    expect(code).toBe(0);
    expect(stderr).toContain(`gaggle: using config ${path}\n`);
    expectConfigured(JSON.parse(stdout), ["from_json"]);
  });

  it("prefers ./children_config.toml over ./children_config.json", async () => {
    const dir = isolated();
    write(dir, "children_config.json", ECHO_JSON("from_json"));
    const toml = write(dir, "children_config.toml", fixtureChild("from_toml", "echo.mjs"));
    const { stdout, stderr } = await gaggle(["list"], { cwd: dir });
    expect(stderr).toContain(`gaggle: using config ${toml}\n`);
    expectConfigured(JSON.parse(stdout), ["from_toml"]);
  });

  it("lists every place it looked when there is no config", async () => {
    const dir = isolated();
    const xdg = isolated();
    const { code, stdout, stderr } = await gaggle(["list"], { cwd: dir, env: { XDG_CONFIG_HOME: xdg } });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("no config file found; looked for:");
    const looked = [
      join(dir, "children_config.toml"),
      join(dir, "children_config.json"),
      join(xdg, "gaggle", "children_config.toml"),
      join(xdg, "gaggle", "children_config.json"),
    ];
    const positions = looked.map((path) => stderr.indexOf(`  ${path}\n`));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it("falls back to $XDG_CONFIG_HOME/gaggle/children_config.toml, after the working directory", async () => {
    const dir = isolated();
    const xdg = isolated();
    const xdgPath = write(xdg, "gaggle/children_config.toml", fixtureChild("from_xdg", "echo.mjs"));
    const fallback = await gaggle(["list"], { cwd: dir, env: { XDG_CONFIG_HOME: xdg } });
    expect(fallback.stderr).toContain(`gaggle: using config ${xdgPath}\n`);
    expectConfigured(JSON.parse(fallback.stdout), ["from_xdg"]);
    const local = write(dir, "children_config.json", ECHO_JSON("from_cwd"));
    const preferred = await gaggle(["list"], { cwd: dir, env: { XDG_CONFIG_HOME: xdg } });
    expect(preferred.stderr).toContain(`gaggle: using config ${local}\n`);
    expectConfigured(JSON.parse(preferred.stdout), ["from_cwd"]);
  });
});

/** Configured children come first, in file order; the built-in virtual children follow them (without Goose, only process). */
function expectConfigured(listed: { children: string[]; count: number }, configured: string[]): void {
  expect(listed.children.slice(0, configured.length)).toEqual(configured);
  expect(listed.children.slice(configured.length)).toEqual(["process"]);
  expect(listed.count).toBe(listed.children.length);
}
