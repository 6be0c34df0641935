// Claude Code itself, from the npm registry, as a user runs it: `claude mcp add` gaggle over stdio (the default
// shared mode: a relay to the daemon), `claude mcp list`, and `claude -p` against a stand-in for the model API,
// with proxy-mode children that start slowly, as cold `npx -y` children do.
import { execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { StandInModel, type ModelTurn } from "../helpers/model-api.js";
import { PinnedPackage } from "../helpers/npm-install.js";
import { daemonStatus, type DaemonStatus, importInto, stopDaemon, stoppedAfterAll } from "../helpers/cli.js";
import { CLI, fixture, ROOT } from "../helpers/paths.js";

/** The release the test is pinned to: what it asserts is this client's behaviour. */
const CLAUDE_CODE = new PinnedPackage("claude-code", "@anthropic-ai/claude-code", "2.1.197", "claude");
const CLAUDE = CLAUDE_CODE.bin;

/** Children that start as slowly as cold `npx -y` ones, and one real npm server through npx. */
const SLOW = ["slow0", "slow1", "slow2"];
const CHILDREN = ["memory", ...SLOW];
const TARGET = "mcp__gaggle__slow2__echo";

beforeAll(() => CLAUDE_CODE.install(), 180_000);

const run = promisify(execFile);
/** Who the commits of a test's own git repository are by, so that they need no git config. */
const GIT_PERSON = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };

/** A person's home with gaggle added to Claude Code in one project, and the config gaggle serves there. */
class Home {
  readonly dir = mkdtempSync(join(tmpdir(), "claude-home-"));
  readonly project = join(this.dir, "project");
  readonly config = join(this.dir, "children_config.toml");
  readonly env: NodeJS.ProcessEnv;

  constructor() {
    mkdirSync(this.project);
    const slow = SLOW.map(
      (name) =>
        `[mcp_servers.${name}]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(fixture("slow.mjs"))}]\nenv = { SLOW_START_MS = "3000" }\n`,
    );
    const memory = `[mcp_servers.memory]\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-memory"]\ncwd = ${JSON.stringify(ROOT)}\nenv = { MEMORY_FILE_PATH = ${JSON.stringify(join(this.dir, "memory.jsonl"))} }\n`;
    writeFileSync(this.config, ['[gateway]\nexpose = "tools"\n', memory, ...slow].join("\n"));
    // Only what a person's shell would hold: no GAGGLE_STANDALONE (the tests' own), so gaggle runs as the daemon.
    this.env = {
      PATH: process.env.PATH,
      HOME: this.dir,
      TMPDIR: process.env.TMPDIR,
      XDG_STATE_HOME: join(this.dir, "state"),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
    };
  }

  /** Claude Code's output, run in `cwd`; it fails with what it wrote when it exits with an error. Its stdin is closed, as `< /dev/null`. */
  claude(args: string[], model?: StandInModel, cwd = this.project): Promise<string> {
    const env = model ? { ...this.env, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-stand-in" } : this.env;
    const claude = spawn(CLAUDE, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], timeout: 50_000 });
    let stdout = "";
    let stderr = "";
    claude.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    claude.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    return new Promise((resolve, reject) => {
      claude.once("error", reject);
      claude.once("close", (code, signal) =>
        code === 0 ? resolve(stdout) : reject(new Error(`claude ${args.join(" ")} ended with ${code ?? signal}:\n${stdout}\n${stderr}`)),
      );
    });
  }

  /** `claude -p` allowed to use gaggle's tools, and Read (what the stand-in model does while it waits). */
  async print(model: StandInModel): Promise<{ result: string; is_error: boolean }> {
    const args = ["-p", "use gaggle's tools", "--output-format", "json", "--allowedTools", "mcp__gaggle", "Read", "--max-turns", "100"];
    return JSON.parse(await this.claude(args, model)) as { result: string; is_error: boolean };
  }

  /** The daemon's live state, read as `gaggle status --json` does. */
  status(): Promise<DaemonStatus> {
    return daemonStatus(this.config, this.env);
  }

  /** Stops the daemon, and proves it and every child it ran are gone. */
  async stop(): Promise<void> {
    expect(await stopDaemon(this.config, this.env)).toEqual([]);
  }
}

const home = stoppedAfterAll(() => new Home());

const addGaggle = (at: Home) => at.claude(["mcp", "add", "gaggle", "--", process.execPath, CLI, "--config", at.config]);

/**
 * The model of a person who asked for a child's tool: it uses the tool once the client offers it, and says what it
 * answered. Until then it reads a file, as a model looking around would, taking a moment over each turn.
 */
function askForTarget(at: Home) {
  return async ({ tools, results }: { tools: string[]; results: Array<{ tool: string; text: string }> }): Promise<ModelTurn> => {
    const answered = results.find((result) => result.tool === TARGET);
    if (answered) return { text: `the child said: ${answered.text}` };
    if (childrenOffered(tools).join() === CHILDREN.join()) return { use: TARGET, input: { text: "through gaggle" } };
    await delay(200);
    return { use: "Read", input: { file_path: at.config } };
  };
}

/** The children whose tools a request offered, by name. */
const childrenOffered = (tools: string[]) =>
  [...new Set(tools.filter((name) => /^mcp__gaggle__(memory|slow\d)__/.test(name)).map((name) => name.split("__")[2]!))].sort();

describe("Claude Code with gaggle as its MCP server", () => {
  it("`claude mcp list` finds gaggle connected on the first try, with the daemon and its children cold", async () => {
    const at = home();
    expect(await addGaggle(at)).toMatch(/Added stdio MCP server gaggle/);
    expect(await at.claude(["mcp", "list"])).toMatch(/^gaggle: .* - ✔ Connected$/m);
  });

  it("`claude -p` with cold children is offered their tools in the same session, once they run, and calls one; the next session on the first try", async () => {
    const at = home();
    await addGaggle(at);

    // Cold: the daemon starts with the session, and the children with it. Claude Code sends its first request
    // with the tools listed by then (the children take longer than it waits), and lists them again on each
    // tools/list_changed gaggle sends as they come up: a later turn of the same session is offered them all.
    const cold = await StandInModel.start(askForTarget(at));
    const first = await at.print(cold).finally(() => cold.close());
    expect(first.is_error).toBe(false);
    expect(first.result).toBe("the child said: through gaggle");
    expect(childrenOffered(cold.requests.at(-2)!.tools)).toEqual(CHILDREN);
    const running = await at.status();

    // Warm: the daemon and its children outlive the first session, and the next one is offered every child's
    // tools in its first request.
    const warm = await StandInModel.start(askForTarget(at));
    const second = await at.print(warm).finally(() => warm.close());
    expect(second.result).toBe("the child said: through gaggle");
    expect(childrenOffered(warm.requests[0]!.tools)).toEqual(CHILDREN);
    expect(warm.requests).toHaveLength(2);
    const after = await at.status();
    expect(after.daemon?.pid).toBe(running.daemon?.pid);
    expect(after.daemon).toBeDefined();
    expect(after.children.map((child) => child.pid)).toEqual(running.children.map((child) => child.pid));
  }, 60_000);

  it("servers added with `claude mcp add` in each scope come over with `gaggle import claude-code`, and the removals it prints work", async () => {
    const at = home();
    const echo = [process.execPath, fixture("echo.mjs")];
    await at.claude(["mcp", "add", "--scope", "user", "mine", "--", ...echo]);
    await at.claude(["mcp", "add", "--scope", "project", "ours", "-e", "K=v", "--", ...echo]);
    await at.claude(["mcp", "add", "--transport", "http", "remote", "https://remote.example.com/mcp", "--header", "Authorization: Bearer x"]);
    const imported = await importInto("claude-code", at);
    expect([...imported.children.keys()]).toEqual(["mine", "remote", "ours"]);
    expect(imported.children.get("mine")).toMatchObject({ command: process.execPath, args: [fixture("echo.mjs")] });
    expect(imported.children.get("ours")).toMatchObject({ command: process.execPath, env: { K: "v" }, cwd: at.project });
    expect(imported.children.get("remote")).toMatchObject({
      transport: "http",
      url: "https://remote.example.com/mcp",
      headers: { Authorization: "Bearer x" },
    });
    expect(imported.removals).toEqual([
      "claude mcp remove mine --scope user",
      "claude mcp remove remote --scope local",
      "claude mcp remove ours --scope project",
    ]);
    for (const removal of imported.removals) await at.claude(removal.split(" ").slice(1));
    expect(await at.claude(["mcp", "get", "mine"]).catch((error: Error) => error.message)).toMatch(/No MCP server named "mine"/);
  });

  it("a server added with `claude mcp add` in a subfolder of a git worktree comes over with `gaggle import claude-code` run there", async () => {
    const at = home();
    const git = (args: string[], cwd = at.project) => run("git", args, { cwd, env: { ...at.env, ...GIT_PERSON } });
    await git(["init", "-q"]);
    await git(["commit", "-q", "--allow-empty", "-m", "start"]);
    const worktree = join(at.dir, "worktree");
    await git(["worktree", "add", "-q", worktree]);
    const folder = join(worktree, "sub");
    mkdirSync(folder);
    await at.claude(["mcp", "add", "here", "--", process.execPath, fixture("echo.mjs")], undefined, folder);
    const imported = await importInto("claude-code", { ...at, project: folder });
    expect([...imported.children.keys()]).toEqual(["here"]);
    expect(imported.removals).toEqual(["claude mcp remove here --scope local"]);
  });
});
