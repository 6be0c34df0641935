// Subjects of the contract suite that are gaggle's built-in children: process, goose and team (on the fake goose),
// duckdb, imagen (on a local stand-in for its API), workspace, and agents (on the fake ACP agent).
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Child } from "../../src/children/child.js";
import type { Switchboard } from "../../src/children/switchboard.js";
import { createVirtualChildren, type MemberUrls } from "../../src/virtual/index.js";
import { fixture } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { groupMembers, isAlive } from "../helpers/processes.js";
import { agentConfig, agentDirs, agentPids } from "../virtual/agents/helpers.js";
import { gooseConfig, readRuns, savedUserTurns } from "../virtual/goose/helpers.js";
import { loadConfig } from "../helpers/config.js";
import { textOf } from "../helpers/gaggle.js";
import type { Subject } from "./harness.js";

/** Members are given a URL; the fake goose connects to it only when a prompt asks it to, which these never do. */
const NO_MEMBER_LISTENER: MemberUrls = {
  urlFor: async () => ({ url: "http://127.0.0.1:9/members/unused/mcp", revoke: () => {} }),
  leadOf: () => undefined,
  sameTeam: () => false,
};

const ONLY = {
  process: "[virtual.goose]\nenabled = false\n\n[virtual.team]\nenabled = false\n",
  duckdb: "[virtual.process]\nenabled = false\n\n[virtual.goose]\nenabled = false\n\n[virtual.team]\nenabled = false\n",
  imagen: "[virtual.process]\nenabled = false\n\n[virtual.goose]\nenabled = false\n\n[virtual.team]\nenabled = false\n",
  goose: "[virtual.process]\nenabled = false\n\n[virtual.team]\nenabled = false\n",
  team: "[virtual.process]\nenabled = false\n",
  workspace: "[virtual.process]\nenabled = false\n\n[virtual.goose]\nenabled = false\n\n[virtual.team]\nenabled = false\n",
  agents: "[virtual.process]\nenabled = false\n\n[virtual.goose]\nenabled = false\n\n[virtual.team]\nenabled = false\n",
};

/** The built-in children the config enables, on this switchboard; `name` is the one under test. */
function builtIns(text: string, switchboard: Switchboard, name: string): { child: Child; others: Child[] } {
  const children = createVirtualChildren(loadConfig(text), switchboard, NO_MEMBER_LISTENER);
  const child = children.find((candidate) => candidate.name === name);
  if (!child) throw new Error(`the config did not enable the ${name} child`);
  return { child, others: children.filter((other) => other !== child) };
}

/** Every process of the process groups gaggle started that is still alive, as leftovers. */
function aliveIn(groups: Iterable<number>): string[] {
  return [...groups].flatMap((group) => groupMembers(group).map((pid) => `pid ${pid} (group ${group})`));
}

const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

export async function processSubject(switchboard: Switchboard): Promise<Subject> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-contract-process-"));
  // A stubborn command ignores SIGTERM, so killing it takes the whole grace period: a call that stays a while.
  const text = `[gateway]\nstate_dir = ${JSON.stringify(join(dir, "state"))}\n\n[virtual.process]\nkill_grace_ms = 600\n\n${ONLY.process}`;
  const { child } = builtIns(text, switchboard, "process");
  const groups = new Set<number>();
  const run = async (command: string) => {
    const pid = json(textOf(await child.callTool("gg_process_run", { command }, {}))).pid as number;
    groups.add(pid);
    return pid;
  };
  return {
    child,
    good: { tool: "gg_process_run", args: { command: "echo contract" }, answers: /"command":"echo contract"/ },
    bad: { tool: "gg_process_run", args: { command: 42 } },
    slow: async () => {
      const pid = await run(`STUBBORN_LIFETIME_MS=30000 exec ${JSON.stringify(process.execPath)} ${JSON.stringify(fixture("process/stubborn.mjs"))}`);
      // Both of its processes are up once its group has two members: only then is SIGTERM ignored by both.
      await until(
        () => groupMembers(pid).length,
        (count) => count === 2,
      );
      return { tool: "gg_process_kill", args: { pid } };
    },
    occupy: async () => {
      await run("sleep 30");
    },
    leftovers: async () => {
      const listed = json(textOf(await child.callTool("gg_process_status", {}, {}))).processes as Array<{ pid: number }>;
      for (const { pid } of listed) groups.add(pid);
      return aliveIn(groups);
    },
    dispose: async () => {},
  };
}

/** The fake goose's runs so far: each leads a process group of its own. */
function gooseGroups(dir: string): number[] {
  return readRuns(join(dir, "argv.jsonl")).map((run) => run.pid);
}

async function gooseRunning(dir: string, count: number): Promise<void> {
  await until(
    () => gooseGroups(dir).filter((group) => groupMembers(group).length > 0).length,
    (alive) => alive >= count,
  );
}

export async function gooseSubject(switchboard: Switchboard): Promise<Subject> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-contract-goose-"));
  const { child } = builtIns(`${gooseConfig(dir)}\n${ONLY.goose}`, switchboard, "goose");
  let slowCalls = 0;
  return {
    child,
    good: { tool: "run_goose", args: { prompt: "hello from the contract" }, answers: /^Started gosling [0-9a-f-]{36}/ },
    bad: { tool: "run_goose", args: { prompt: 7 } },
    // dispatch_agent waits for the agent's whole turn, which the fake goose makes last 800 ms.
    slow: async () => {
      const before = gooseGroups(dir).length;
      return {
        tool: "dispatch_agent",
        args: { prompt: `[slow 800] task ${++slowCalls}` },
        working: async () => {
          await until(
            () => gooseGroups(dir).length,
            (runs) => runs > before,
          );
        },
      };
    },
    stopsCancelled: async () => {
      await until(
        () => aliveIn(gooseGroups(dir)),
        (alive) => alive.length === 0,
      );
    },
    occupy: async () => {
      await child.callTool("run_goose", { prompt: "[hang] a turn that never ends" }, {});
      await gooseRunning(dir, 1);
    },
    leftovers: async () => aliveIn(gooseGroups(dir)),
    dispose: async () => {},
  };
}

export async function teamSubject(switchboard: Switchboard): Promise<Subject> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-contract-team-"));
  const { child, others } = builtIns(`${gooseConfig(dir)}\n${ONLY.team}`, switchboard, "team");
  const team_id = "contract";
  const addMember = async (prompt: string) => {
    const added = json(textOf(await child.callTool("gg_team_manage", { team_id, prompt }, {})));
    return added.agent_id as string;
  };
  return {
    child,
    good: { tool: "gg_team_manage", args: { team_id, prompt: "hello from the contract" }, answers: /"operation":"add"/ },
    bad: { tool: "gg_team_manage", args: { team_id: 7 } },
    // Removing a member waits for its gosling to go; one that ignores SIGTERM takes the whole grace period.
    slow: async () => {
      const turns = savedUserTurns(dir);
      const agent = await addMember("[ignore-term] [hang] stay busy");
      // Its turn is under way, SIGTERM ignored, once the fake goose has saved it.
      await until(
        () => savedUserTurns(dir),
        (saved) => saved > turns,
      );
      return { tool: "gg_team_manage", args: { team_id, remove_agent_ids: [agent] } };
    },
    occupy: async () => {
      await addMember("[hang] stay busy");
      await gooseRunning(dir, 1);
    },
    leftovers: async () => aliveIn(gooseGroups(dir)),
    dispose: async () => {
      await Promise.allSettled(others.map((other) => other.close()));
    },
  };
}

/** A query that keeps DuckDB busy a second or so on this machine, a different one each time. */
let heavyQueries = 0;
const heavy = (rows: number) => `select count(*) + ${++heavyQueries} as n from range(${rows}) t1, range(4) t2 where t1.range % 7 = t2.range`;

export async function duckdbSubject(switchboard: Switchboard): Promise<Subject> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-contract-duckdb-"));
  const text = `[virtual.duckdb]\nenabled = true\nroots = [${JSON.stringify(dir)}]\ntimeout_ms = 600000\n\n${ONLY.duckdb}`;
  const { child } = builtIns(text, switchboard, "duckdb");
  // A query is the only work a duckdb child holds; closing it must interrupt one that runs.
  const running = new Set<Promise<unknown>>();
  return {
    child,
    good: { tool: "duckdb", args: { query: "select 'contract' as word" }, answers: /"word":"contract"/ },
    bad: { tool: "duckdb", args: { query: 42 } },
    slow: async () => ({ tool: "duckdb", args: { query: heavy(30_000_000) } }),
    occupy: async () => {
      const query = child.callTool("duckdb", { query: heavy(100_000_000_000) }, {}).catch(() => undefined);
      running.add(query);
      // Closing ends it whether it is running or still queued.
      void query.then(() => running.delete(query));
    },
    leftovers: async () => [...running].map(() => "a query still running"),
    dispose: async () => {},
  };
}

/** A Gemini API stand-in: every prompt gets one 1x1 PNG, "[slow MS]" after MS ms, "[hang]" never. */
async function fakeImagenApi(): Promise<{ base: string; open: () => number; close: () => Promise<void> }> {
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
  let open = 0;
  const server = createHttpServer((req, res) => {
    let body = "";
    open++;
    res.once("close", () => open--);
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      const prompt = (JSON.parse(body) as { instances: Array<{ prompt: string }> }).instances[0]!.prompt;
      if (prompt.includes("[hang]")) return;
      const answer = () =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ predictions: [{ bytesBase64Encoded: png, mimeType: "image/png" }] }));
      const slow = /\[slow (\d+)\]/.exec(prompt);
      if (slow) setTimeout(answer, Number(slow[1]));
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1beta`,
    open: () => open,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export async function imagenSubject(switchboard: Switchboard): Promise<Subject> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-contract-imagen-"));
  const api = await fakeImagenApi();
  const text = `[virtual.imagen]\nenabled = true\napi_key = "contract-key"\napi_base = "${api.base}"\noutput_dir = ${JSON.stringify(dir)}\n\n${ONLY.imagen}`;
  const { child } = builtIns(text, switchboard, "imagen");
  let slowCalls = 0;
  return {
    child,
    good: { tool: "imagen_generate_fast", args: { prompt: "a contract" }, answers: /"model":"imagen-4.0-fast-generate-001"/ },
    bad: { tool: "imagen_generate_fast", args: { prompt: "a contract", number_of_images: 12 } },
    slow: async () => ({ tool: "imagen_generate_fast", args: { prompt: `[slow 800] picture ${++slowCalls}` } }),
    // A request the API never answers is what a closed imagen child must end.
    occupy: async () => {
      void child.callTool("imagen_generate_fast", { prompt: "[hang]" }, {}).catch(() => undefined);
      await until(api.open, (count) => count > 0);
    },
    leftovers: async () => Array.from({ length: api.open() }, () => "a request open at the API"),
    dispose: () => api.close(),
  };
}

export async function workspaceSubject(switchboard: Switchboard): Promise<Subject> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-contract-workspace-"));
  const text = `[gateway]\nshutdown_grace_ms = 300\n\n[virtual.workspace]\nenabled = true\nroots = [${JSON.stringify(dir)}]\n\n${ONLY.workspace}`;
  const { child } = builtIns(text, switchboard, "workspace");
  const started: number[] = [];
  let slowCalls = 0;
  /** The pid of the job a slow call runs in, once it has written it. */
  const jobPid = (file: string) => {
    try {
      return Number(readFileSync(file, "utf8")) || undefined;
    } catch {
      return undefined;
    }
  };
  return {
    child,
    good: { tool: "Bash", args: { command: "echo contract" }, answers: /^contract\n\[exit status 0\]$/ },
    bad: { tool: "Bash", args: { command: 42 } },
    // Calls without a caller share one shell, which runs one command at a time: a slow call holds it.
    slow: async () => {
      const file = join(dir, `slow-${++slowCalls}`);
      return {
        tool: "Bash",
        args: { command: `echo $BASHPID > ${file}; sleep 1` },
        working: async () => {
          await until(
            () => jobPid(file),
            (found) => found !== undefined,
          );
        },
      };
    },
    stopsCancelled: async () => {
      const pids = [...Array(slowCalls).keys()].flatMap((i) => jobPid(join(dir, `slow-${i + 1}`)) ?? []);
      await until(
        () => pids.filter(isAlive),
        (alive) => alive.length === 0,
      );
    },
    occupy: async () => {
      const answer = textOf(await child.callTool("Bash", { command: "echo $$; sleep 300 > /dev/null 2>&1 & echo $!" }, {}));
      started.push(...answer.split("\n").slice(0, 2).map(Number));
    },
    leftovers: async () => started.filter(isAlive).map((pid) => `pid ${pid}`),
    dispose: async () => {},
  };
}

export async function agentsSubject(switchboard: Switchboard): Promise<Subject> {
  const dirs = agentDirs();
  const { child } = builtIns(agentConfig(dirs, "", ONLY.agents), switchboard, "agents");
  const alive = () => agentPids(dirs).filter(isAlive);
  let slowCalls = 0;
  return {
    child,
    good: { tool: "start_agent", args: { prompt: "say hello from the contract" }, answers: /^Started agent session [0-9a-f-]{36} \(fake\)/ },
    bad: { tool: "start_agent", args: { prompt: 7 } },
    // dispatch_agent waits for the agent's whole turn, which the fake agent makes last 800 ms.
    slow: async () => ({
      tool: "dispatch_agent",
      args: { prompt: `sleep 800\nsay task ${++slowCalls}` },
      working: async () => {
        await until(alive, (pids) => pids.length > 0);
      },
    }),
    // A cancelled dispatch releases its session, and the agent's process ends with its last session.
    stopsCancelled: async () => {
      await until(alive, (pids) => pids.length === 0);
    },
    occupy: async () => {
      await child.callTool("start_agent", { prompt: "hang" }, {});
      await until(alive, (pids) => pids.length > 0);
    },
    leftovers: async () => alive().map((pid) => `agent pid ${pid}`),
    dispose: async () => {},
  };
}
