// Gemini CLI itself, from the npm registry, as a user runs it: `gemini mcp add` gaggle over stdio (the default
// shared mode: a relay to the daemon), `gemini mcp list`, which connects to it, and `gemini -p` against a stand-in
// for the Gemini API, with proxy-mode children that start slowly, as cold `npx -y` children do.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { StandInGemini } from "../helpers/gemini-api.js";
import type { ModelRequest, ModelTurn } from "../helpers/model-api.js";
import { PinnedPackage } from "../helpers/npm-install.js";
import { daemonStatus, type DaemonStatus, importInto, stopDaemon, stoppedAfterAll } from "../helpers/cli.js";
import { CLI, fixture, ROOT } from "../helpers/paths.js";

const run = promisify(execFile);

/** The release the test is pinned to: what it asserts is this client's behaviour. */
const GEMINI_CLI = new PinnedPackage("gemini-cli", "@google/gemini-cli", "0.61.0", "gemini");
const GEMINI = GEMINI_CLI.bin;

/** Children that start as slowly as cold `npx -y` ones, and one real npm server through npx. */
const SLOW = ["slow0", "slow1"];
const CHILDREN = ["memory", ...SLOW];
/** Gemini CLI offers an MCP server's tools as `mcp_<server>_<tool>`. */
const TARGET = "mcp_gaggle_slow1__echo";

beforeAll(() => GEMINI_CLI.install(), 180_000);

/** A person's home with gaggle added to Gemini CLI in one project, and the config gaggle serves there. */
class Home {
  readonly dir = mkdtempSync(join(tmpdir(), "gemini-home-"));
  readonly project = join(this.dir, "project");
  readonly config = join(this.dir, "children_config.toml");
  readonly env: NodeJS.ProcessEnv;

  /** `trusted`: whether headless runs are told to trust the folder, as the other tests' are. */
  constructor(trusted = true) {
    mkdirSync(this.project);
    mkdirSync(join(this.dir, ".gemini"));
    // Signed in with an API key, and nothing sent anywhere but the stand-in.
    const settings = {
      security: { auth: { selectedType: "gemini-api-key" } },
      privacy: { usageStatisticsEnabled: false },
      general: { enableAutoUpdate: false },
    };
    writeFileSync(join(this.dir, ".gemini", "settings.json"), JSON.stringify(settings));
    const slow = SLOW.map(
      (name) =>
        `[mcp_servers.${name}]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(fixture("slow.mjs"))}]\nenv = { SLOW_START_MS = "3000" }\n`,
    );
    const memory = `[mcp_servers.memory]\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-memory"]\ncwd = ${JSON.stringify(ROOT)}\nenv = { MEMORY_FILE_PATH = ${JSON.stringify(join(this.dir, "memory.jsonl"))} }\n`;
    writeFileSync(this.config, ['[gateway]\nexpose = "tools"\n', memory, ...slow].join("\n"));
    // Only what a person's shell would hold, and the folder trusted as headless runs are told to (Gemini CLI
    // starts no MCP server in a folder it does not trust).
    this.env = { PATH: process.env.PATH, HOME: this.dir, TMPDIR: process.env.TMPDIR, ...(trusted && { GEMINI_CLI_TRUST_WORKSPACE: "true" }) };
  }

  /** What Gemini CLI wrote: its `mcp` commands write to stderr, `-p --output-format json` its answer to stdout. */
  async gemini(args: string[], model?: StandInGemini): Promise<{ stdout: string; stderr: string }> {
    const env = model ? { ...this.env, GEMINI_API_KEY: "stand-in", GOOGLE_GEMINI_BASE_URL: model.url } : this.env;
    return run(GEMINI, args, { cwd: this.project, env, timeout: 50_000 });
  }

  /** `gemini -p` with every tool allowed; its answer is the model's last text. */
  async print(model: StandInGemini): Promise<string> {
    const { stdout } = await this.gemini(["-m", "gemini-2.5-flash", "-p", "use gaggle's tools", "--yolo", "--output-format", "json"], model);
    return (JSON.parse(stdout) as { response: string }).response;
  }

  /** The daemon's live state, read as `gaggle status --json` does. */
  status(): Promise<DaemonStatus> {
    return daemonStatus(this.config, this.env);
  }

  /** Trusts the project folder as a person does by hand: its entry in ~/.gemini/trustedFolders.json. */
  trust(): void {
    writeFileSync(join(this.dir, ".gemini", "trustedFolders.json"), JSON.stringify({ [this.project]: "TRUST_FOLDER" }));
  }

  /** Stops the daemon, and proves it and every child it ran are gone. */
  async stop(): Promise<void> {
    expect(await stopDaemon(this.config, this.env)).toEqual([]);
  }
}

const home = stoppedAfterAll(() => new Home());
const untrustedHome = stoppedAfterAll(() => new Home(false));

const addGaggle = async (at: Home) => {
  const { stdout, stderr } = await at.gemini(["mcp", "add", "gaggle", process.execPath, CLI, "--config", at.config]);
  return stdout + stderr;
};

/** The children whose tools a request offered, by name. */
const childrenOffered = (tools: string[]) =>
  [
    ...new Set(tools.filter((name) => /^mcp_gaggle_(memory|slow\d)__/.test(name)).map((name) => name.slice("mcp_gaggle_".length).split("__")[0]!)),
  ].sort();

/**
 * The model of a person who asked for a child's tool: it uses the tool once the client offers it, and says what it
 * answered. Until then it looks at the folder, as a model looking around would (each time a little differently,
 * since Gemini CLI ends a session that repeats one call), taking a moment over each turn.
 */
function askForTarget() {
  let looks = 0;
  return async ({ tools, results }: ModelRequest): Promise<ModelTurn> => {
    const answered = results.find((result) => result.tool === TARGET);
    if (answered) return { text: `the child said: ${answered.text}` };
    if (childrenOffered(tools).join() === CHILDREN.join()) return { use: TARGET, input: { text: "through gaggle" } };
    await delay(200);
    return { use: "list_directory", input: { dir_path: ".", ignore: [`look-${++looks}`] } };
  };
}

describe("Gemini CLI with gaggle as its MCP server", () => {
  it("`gemini mcp list` finds gaggle connected on the first try, with the daemon and its children cold", async () => {
    const at = home();
    expect(await addGaggle(at)).toMatch(/MCP server "gaggle" added to project settings/);
    const { stdout, stderr } = await at.gemini(["mcp", "list"]);
    expect(stdout + stderr).toMatch(/^✓ gaggle: .* \(stdio\) - Connected$/m);
  });

  it("`gemini mcp list` says gaggle is disabled in an untrusted folder, and connects once ~/.gemini/trustedFolders.json lists it", async () => {
    const at = untrustedHome();
    await addGaggle(at);
    const untrusted = await at.gemini(["mcp", "list"]);
    expect(untrusted.stdout + untrusted.stderr).toMatch(/this folder is untrusted/);
    expect(untrusted.stdout + untrusted.stderr).toMatch(/^○ gaggle: .* \(stdio\) - Disabled$/m);
    at.trust();
    const trusted = await at.gemini(["mcp", "list"]);
    expect(trusted.stdout + trusted.stderr).toMatch(/^✓ gaggle: .* \(stdio\) - Connected$/m);
  });

  it("`gemini -p` with cold children is offered their tools in the same session, once they run, and calls one; the next session on the first try", async () => {
    const at = home();
    await addGaggle(at);

    // Cold: the daemon starts with the session, and the children with it. Gemini CLI lists gaggle's tools again on
    // each tools/list_changed gaggle sends as they come up: a later turn of the same session is offered them all.
    const cold = await StandInGemini.start(askForTarget());
    const first = await at.print(cold).finally(() => cold.close());
    expect(first).toMatch(/^the child said: .*through gaggle/);
    expect(childrenOffered(cold.requests[0]!.tools)).not.toEqual(CHILDREN);
    const running = await at.status();

    // Warm: the daemon and its children outlive the first session, and the next one is offered every child's
    // tools in its first request.
    const warm = await StandInGemini.start(askForTarget());
    const second = await at.print(warm).finally(() => warm.close());
    expect(second).toMatch(/^the child said: .*through gaggle/);
    expect(childrenOffered(warm.requests[0]!.tools)).toEqual(CHILDREN);
    expect(warm.requests).toHaveLength(2);
    const after = await at.status();
    expect(after.daemon?.pid).toBe(running.daemon?.pid);
    expect(after.children.map((child) => child.pid)).toEqual(running.children.map((child) => child.pid));
  }, 60_000);

  it("servers added with `gemini mcp add` come over with `gaggle import gemini`, and the removals it prints work", async () => {
    const at = home();
    await at.gemini(["mcp", "add", "--scope", "user", "mine", process.execPath, fixture("echo.mjs")]);
    await at.gemini(["mcp", "add", "--transport", "http", "remote", "https://remote.example.com/mcp", "--header", "X-Key: k"]);
    const imported = await importInto("gemini", at);
    expect(imported.children.get("mine")).toMatchObject({ command: process.execPath, args: [fixture("echo.mjs")] });
    expect(imported.children.get("remote")).toMatchObject({ transport: "http", url: "https://remote.example.com/mcp", headers: { "X-Key": "k" } });
    expect(imported.removals).toEqual(["gemini mcp remove mine --scope user", "gemini mcp remove remote"]);
    for (const removal of imported.removals) await at.gemini(removal.split(" ").slice(1));
    const servers = (path: string) => Object.keys((JSON.parse(readFileSync(path, "utf8")) as { mcpServers?: object }).mcpServers ?? {});
    expect([...servers(join(at.dir, ".gemini", "settings.json")), ...servers(join(at.project, ".gemini", "settings.json"))]).toEqual([]);
  });
});
