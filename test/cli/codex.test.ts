// Codex itself, from the npm registry, as a user runs it: `codex mcp add` gaggle over stdio (the default shared
// mode: a relay to the daemon), `codex mcp list`, and `codex app-server`, the JSON-RPC interface Codex's editor
// extensions use, which lists each MCP server's tools and calls one without a model.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { PinnedPackage } from "../helpers/npm-install.js";
import { daemonStatus, type DaemonStatus, importInto, stopDaemon, stoppedAfterAll } from "../helpers/cli.js";
import { CLI, fixture, fixtureChild, ROOT } from "../helpers/paths.js";

const run = promisify(execFile);

/** The release the test is pinned to: what it asserts is this client's behaviour. */
const CODEX_VERSION = new PinnedPackage("codex", "@openai/codex", "0.171.0", "codex");
const CODEX = CODEX_VERSION.bin;

beforeAll(() => CODEX_VERSION.install(), 180_000);

interface ServerStatus {
  name: string;
  tools: Record<string, unknown>;
  toolsError?: string | null;
}

/** `codex app-server` over stdio: one JSON-RPC message a line, no "jsonrpc" member. */
class AppServer {
  private readonly process: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<number, (message: { result?: unknown; error?: { message: string } }) => void>();
  private next = 0;
  private stderr = "";

  constructor(env: NodeJS.ProcessEnv, cwd: string) {
    this.process = spawn(CODEX, ["app-server"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    this.process.stderr.setEncoding("utf8").on("data", (chunk: string) => (this.stderr += chunk));
    createInterface({ input: this.process.stdout }).on("line", (line) => {
      const message = JSON.parse(line) as { id?: number; method?: string; result?: unknown; error?: { message: string } };
      if (message.method !== undefined || message.id === undefined) return;
      this.pending.get(message.id)?.(message);
      this.pending.delete(message.id);
    });
  }

  /** A request's result; fails with Codex's error message and what it wrote to stderr. */
  request<T>(method: string, params: unknown): Promise<T> {
    const id = ++this.next;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, (message) =>
        message.error ? reject(new Error(`${method}: ${message.error.message}\n${this.stderr}`)) : resolve(message.result as T),
      );
      this.process.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  async start(): Promise<string> {
    await this.request("initialize", { clientInfo: { name: "gaggle-test", version: "1" } });
    this.process.stdin.write(`${JSON.stringify({ method: "initialized" })}\n`);
    const started = await this.request<{ thread: { id: string } }>("thread/start", {});
    return started.thread.id;
  }

  /** gaggle's entry, as the thread's own MCP connection lists it. */
  async gaggle(thread: string): Promise<ServerStatus> {
    const { data } = await this.request<{ data: ServerStatus[] }>("mcpServerStatus/list", { threadId: thread, serverName: "gaggle" });
    return data[0]!;
  }

  /** Codex ends when its stdin closes, and its MCP servers (gaggle's relay) with it. */
  close(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return Promise.resolve();
    const closed = new Promise<void>((resolve) => this.process.once("close", () => resolve()));
    this.process.stdin.end();
    const kill = setTimeout(() => this.process.kill("SIGKILL"), 10_000);
    return closed.finally(() => clearTimeout(kill));
  }
}

/** A person's home with gaggle added to Codex, and the proxy-mode config gaggle serves there. */
class Home {
  readonly dir = mkdtempSync(join(tmpdir(), "codex-home-"));
  readonly project = join(this.dir, "project");
  readonly config = join(this.dir, "children_config.toml");
  /** What Codex passes its MCP servers is its own short list of variables; gaggle's state dir follows HOME. */
  readonly env: NodeJS.ProcessEnv;
  private readonly servers: AppServer[] = [];
  /** Each config, and each environment its daemons were started from (another key, another daemon): stop() stops them. */
  private readonly daemons: Array<{ config: string; env: NodeJS.ProcessEnv }> = [];

  constructor() {
    mkdirSync(this.project);
    const memory = `[mcp_servers.memory]\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-memory"]\ncwd = ${JSON.stringify(ROOT)}\nenv = { MEMORY_FILE_PATH = ${JSON.stringify(join(this.dir, "memory.jsonl"))} }\n`;
    const echo = `[mcp_servers.echo]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(fixture("echo.mjs"))}]\n`;
    writeFileSync(this.config, ['[gateway]\nexpose = "tools"\n', memory, echo].join("\n"));
    this.env = { PATH: process.env.PATH, HOME: this.dir, TMPDIR: process.env.TMPDIR };
  }

  async codex(args: string[]): Promise<string> {
    const { stdout } = await run(CODEX, args, { cwd: this.project, env: this.env, timeout: 20_000 });
    return stdout;
  }

  /** A `codex app-server` started from a shell with `env` (by default only what any shell holds). */
  appServer(env = this.env): AppServer {
    const server = new AppServer(env, this.project);
    this.servers.push(server);
    return server;
  }

  /** A daemon stop() stops too: of another config, or of one started from a shell with more variables. */
  alsoStop(config: string, env: NodeJS.ProcessEnv): void {
    this.daemons.push({ config, env });
  }

  /** The daemon's live state, read as `gaggle status --json` does. */
  status(config = this.config, env = this.env): Promise<DaemonStatus> {
    return daemonStatus(config, env);
  }

  /** Ends Codex, stops the daemons, and proves them and every child they ran gone. */
  async stop(): Promise<void> {
    await Promise.all(this.servers.splice(0).map((server) => server.close()));
    for (const { config, env } of [{ config: this.config, env: this.env }, ...this.daemons]) expect(await stopDaemon(config, env)).toEqual([]);
  }
}

const home = stoppedAfterAll(() => new Home());

const addGaggle = (at: Home) => at.codex(["mcp", "add", "gaggle", "--", process.execPath, CLI, "--config", at.config]);

/** The children whose tools a list holds, by name. */
const childrenListed = (status: ServerStatus) =>
  [
    ...new Set(
      Object.keys(status.tools)
        .filter((name) => /^(memory|echo)__/.test(name))
        .map((name) => name.split("__")[0]!),
    ),
  ].sort();

/** Polls the daemon until every child runs: what a later Codex finds warm. */
async function untilRunning(at: Home, names: string[]): Promise<DaemonStatus> {
  for (let polls = 1; ; polls++) {
    const status = await at.status();
    const running = status.children.filter((child) => child.pid !== null).map((child) => child.server_id);
    if (names.every((name) => running.includes(name)) || polls === 300) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("Codex with gaggle as its MCP server", () => {
  it("`codex mcp add` writes gaggle's entry, and `codex mcp list` shows it (it starts no server)", async () => {
    const at = home();
    expect(await addGaggle(at)).toMatch(/Added global MCP server 'gaggle'/);
    expect(readFileSync(join(at.dir, ".codex", "config.toml"), "utf8")).toContain(
      `[mcp_servers.gaggle]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(CLI)}, "--config", ${JSON.stringify(at.config)}]`,
    );
    expect(await at.codex(["mcp", "list"])).toMatch(/^gaggle +\S+ +\S+cli\.js --config \S+ +- +- +enabled/m);
    expect((await at.status()).daemon).toBeUndefined();
  });

  it("`codex app-server` lists every child's tools with the daemon cold, calls them, and a later Codex gets them at once", async () => {
    const at = home();
    await addGaggle(at);

    // Cold: the thread's connection starts the daemon. Codex keeps the tool list it got when it connected (it does
    // not list again on tools/list_changed), so gaggle's first list to Codex waits for the children to start
    // (gateway.list_wait_ms_by_client): the list holds them all.
    const cold = at.appServer();
    const thread = await cold.start();
    const first = await cold.gaggle(thread);
    expect(first.toolsError ?? null).toBeNull();
    expect(Object.keys(first.tools)).toEqual(expect.arrayContaining(["gg_process_run", "gg_process_status", "gg_process_kill"]));
    expect(childrenListed(first)).toEqual(["echo", "memory"]);
    const echoed = await cold.request<{ content: Array<{ text: string }> }>("mcpServer/tool/call", {
      threadId: thread,
      server: "gaggle",
      tool: "echo__echo",
      arguments: { text: "through gaggle" },
    });
    expect(echoed.content[0]!.text).toBe("through gaggle");
    await cold.request("mcpServer/tool/call", {
      threadId: thread,
      server: "gaggle",
      tool: "memory__create_entities",
      arguments: { entities: [{ name: "gaggle", entityType: "gateway", observations: ["called from Codex"] }] },
    });
    await cold.close();
    const running = await untilRunning(at, ["echo", "memory"]);

    // Warm: the daemon and its children outlive that Codex; the next one's first list holds every child's tools,
    // and the memory child is the same process, holding what the first Codex wrote.
    const warm = at.appServer();
    const next = await warm.start();
    expect(childrenListed(await warm.gaggle(next))).toEqual(["echo", "memory"]);
    const graph = await warm.request<{ structuredContent: { entities: Array<{ name: string; observations: string[] }> } }>("mcpServer/tool/call", {
      threadId: next,
      server: "gaggle",
      tool: "memory__read_graph",
      arguments: {},
    });
    expect(graph.structuredContent.entities).toEqual([expect.objectContaining({ name: "gaggle", observations: ["called from Codex"] })]);
    const after = await at.status();
    expect(after.daemon).toBeDefined();
    expect(after.daemon?.pid).toBe(running.daemon?.pid);
    expect(after.children.map((child) => child.pid)).toEqual(running.children.map((child) => child.pid));
  }, 60_000);

  it("a ${VAR} of the shell's reaches gaggle once Codex's entry names it in env_vars, and gaggle says so until then", async () => {
    const at = home();
    const config = join(at.dir, "env_config.toml");
    writeFileSync(config, `[gateway]\nexpose = "tools"\n\n${fixtureChild("echo", "echo.mjs", 'env = { GIVEN = "${DEMO_SETTING}" }')}`);
    await at.codex(["mcp", "add", "gaggle", "--", process.execPath, CLI, "--config", config]);
    const shell = { ...at.env, DEMO_SETTING: "from the shell" };
    at.alsoStop(config, at.env);
    at.alsoStop(config, shell);

    // Codex passes gaggle only its own short list of variables: the config does not load, and gaggle says why.
    const without = at.appServer(shell);
    const thread = await without.start();
    expect(Object.keys((await without.gaggle(thread)).tools)).toContain("list_registered_children");
    const listed = await without.request<{ content: Array<{ text: string }> }>("mcpServer/tool/call", {
      threadId: thread,
      server: "gaggle",
      tool: "list_registered_children",
      arguments: {},
    });
    expect((JSON.parse(listed.content[0]!.text) as { config_errors: string[] }).config_errors.join("\n")).toMatch(
      /DEMO_SETTING is not set .*Codex passes only those its entry names in env_vars/,
    );
    await without.close();

    writeFileSync(
      join(at.dir, ".codex", "config.toml"),
      `${readFileSync(join(at.dir, ".codex", "config.toml"), "utf8")}env_vars = ["DEMO_SETTING"]\n`,
    );
    const named = at.appServer(shell);
    const next = await named.start();
    const given = await named.request<{ content: Array<{ text: string }> }>("mcpServer/tool/call", {
      threadId: next,
      server: "gaggle",
      tool: "echo__env",
      arguments: { name: "GIVEN" },
    });
    expect(given.content[0]!.text).toBe("from the shell");
  });

  it("servers added with `codex mcp add` come over with `gaggle import codex`, in gaggle's keys, and the removals it prints work", async () => {
    const at = home();
    await at.codex(["mcp", "add", "mine", "--env", "K=v", "--", process.execPath, fixture("echo.mjs")]);
    await at.codex(["mcp", "add", "remote", "--url", "https://remote.example.com/mcp", "--bearer-token-env-var", "GAGGLE_TEST_REMOTE_TOKEN"]);
    const imported = await importInto("codex", at, { ...at.env, GAGGLE_TEST_REMOTE_TOKEN: "r" });
    expect(imported.run.stdout).toContain("remote needs GAGGLE_TEST_REMOTE_TOKEN set where gaggle runs");
    expect(imported.children.get("mine")).toMatchObject({ command: process.execPath, args: [fixture("echo.mjs")], env: { K: "v" } });
    expect(imported.children.get("remote")).toMatchObject({
      transport: "http",
      url: "https://remote.example.com/mcp",
      headers: { Authorization: "Bearer r" },
    });
    expect(imported.removals).toEqual(["codex mcp remove mine", "codex mcp remove remote"]);
    for (const removal of imported.removals) await at.codex(removal.split(" ").slice(1));
    expect(readFileSync(join(at.dir, ".codex", "config.toml"), "utf8")).not.toContain("mcp_servers");
  });
});
