// Shared by the team tests: a gaggle whose goose child runs the fake goose, team calls, and a scratch git repository.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { failureOf, gooseConfig, pidsOf, readRuns, type FakeRun } from "../goose/helpers.js";

export interface MemberRow {
  agent_id: string;
  title: string;
  state: string;
  gosling_id: string | null;
  worktree_path: string | null;
  worktree_name: string | null;
  added_by: string;
  tokens: number | null;
  last_message: { from: string; to: string; excerpt: string } | null;
  waiting_deliveries: number;
}

export interface DeliveryRow {
  delivery_id: string;
  message_id: string;
  from: string | null;
  to: string;
  state: "pending" | "deferred" | "delivered" | "failed";
  reason: string | null;
}

export interface UnreadRow {
  message_id: string;
  from: string;
  from_title: string;
  message: string;
  kind: string;
}

export interface TeamStatus {
  team_id: string;
  lead_agent_id: string;
  caller_agent_id: string;
  generated_at: string;
  members: MemberRow[];
  deliveries: DeliveryRow[];
  unread_count: number;
  unread_messages: UnreadRow[];
}

export interface TeamGaggle {
  /** The lead's client. */
  client: Client;
  dir: string;
  /** gaggle's own pid. */
  pid: number;
  call(tool: string, args?: Record<string, unknown>, client?: Client): Promise<CallToolResult>;
  /** A team tool's JSON answer; throws on an isError result. */
  json<T = Record<string, unknown>>(tool: string, args?: Record<string, unknown>, client?: Client): Promise<T>;
  failure(tool: string, args?: Record<string, unknown>, client?: Client): Promise<{ code: string; error: string; hint?: string }>;
  /** Adds a member and returns its agent id. */
  add(teamId: string, args?: Record<string, unknown>): Promise<string>;
  status(teamId: string, client?: Client): Promise<TeamStatus>;
  /** A gosling's whole transcript (goose get_gosling_output). */
  transcript(goslingId: string): Promise<string>;
  /** Polls until the member's state is one of `states`; returns its row. */
  member(teamId: string, agentId: string, states?: string[], ms?: number): Promise<MemberRow>;
  runs(): FakeRun[];
  /** Every fake goose pid started so far. */
  pids(): number[];
  close(): Promise<void>;
  http?: HttpGaggle;
}

/** The config of a team gaggle: [virtual.goose] runs the fake in `dir`; `team` adds lines to [virtual.team]. */
export function teamConfig(dir: string, team = "", goose = "", gateway = ""): string {
  return `${gooseConfig(dir, goose, gateway)}\n[virtual.team]\n${team}\n`;
}

export async function startTeamGaggle(
  options: { team?: string; goose?: string; gateway?: string; http?: boolean; dir?: string; env?: Record<string, string> } = {},
): Promise<TeamGaggle> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "gaggle-team-"));
  const config = teamConfig(dir, options.team, options.goose, options.gateway);
  const env = { XDG_STATE_HOME: join(dir, "xdg-state"), ...options.env };
  let client: Client;
  let pid: number;
  let close: () => Promise<void>;
  let http: HttpGaggle | undefined;
  if (options.http) {
    http = await startHttpGaggle(config, { env });
    client = await http.connect({ name: "lead" });
    pid = http.pid;
    close = () => http!.stop();
  } else {
    const gaggle: RunningGaggle = await startGaggle(config, { env });
    client = gaggle.client;
    pid = gaggle.pid;
    close = () => gaggle.close();
  }
  const call = async (tool: string, args: Record<string, unknown> = {}, by: Client = client) =>
    (await by.callTool({ name: "execute_child_tool", arguments: { server_id: "team", tool_name: tool, arguments: args } })) as CallToolResult;
  const json = async <T>(tool: string, args: Record<string, unknown> = {}, by: Client = client): Promise<T> => {
    const result = await call(tool, args, by);
    if (result.isError) throw new Error(`${tool} failed: ${textOf(result)}`);
    return JSON.parse(textOf(result)) as T;
  };
  const status = (teamId: string, by: Client = client) => json<TeamStatus>("gg_team_status", { team_id: teamId }, by);
  const runs = () => readRuns(join(dir, "argv.jsonl"));
  return {
    client,
    dir,
    pid,
    http,
    call,
    json,
    failure: async (tool, args = {}, by = client) => failureOf(await call(tool, args, by)),
    add: async (teamId, args = {}) => (await json<{ agent_id: string }>("gg_team_manage", { team_id: teamId, ...args })).agent_id,
    status,
    transcript: async (goslingId) => {
      const result = (await client.callTool({
        name: "execute_child_tool",
        arguments: { server_id: "goose", tool_name: "get_gosling_output", arguments: { process_id: goslingId, full_output: true } },
      })) as CallToolResult;
      return textOf(result);
    },
    member: async (teamId, agentId, states = ["idle"], ms = 15_000) => {
      const read = async () => (await status(teamId)).members.find((row) => row.agent_id === agentId);
      const row = await until(read, (found) => found !== undefined && states.includes(found.state), ms);
      if (!row || !states.includes(row.state)) throw new Error(`member ${agentId} never reached ${states.join("/")}: ${JSON.stringify(row)}`);
      return row;
    },
    runs,
    pids: () => pidsOf(runs()),
    close,
  };
}

/** The text of a turn: what `--text` carried. */
export function promptOf(run: FakeRun): string {
  const at = run.argv.indexOf("--text");
  return at === -1 ? (run.argv.find((arg) => arg.startsWith("--text="))?.slice(7) ?? "") : run.argv[at + 1]!;
}

/** A `[call-team TOOL {json}]` directive for the fake goose. */
export function callTeam(tool: string, args: Record<string, unknown>): string {
  return `[call-team ${tool} ${JSON.stringify(args)}]`;
}

function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" },
  });
}

/**
 * Makes `dir` (the goose child's cwd in these tests) a git repository with one commit holding `files`
 * (path -> content; mode 0755 when the path ends in .sh). What gaggle and the fake write there is ignored.
 */
export function makeRepo(dir: string, files: Record<string, string> = {}): string {
  gitIn(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, ".gitignore"), "state/\ngoose-root/\nxdg-state/\nargv.jsonl\nworktrees/\n");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
    if (path.endsWith(".sh")) chmodSync(join(dir, path), 0o755);
  }
  gitIn(dir, "add", "-A");
  gitIn(dir, "commit", "-q", "-m", "start");
  return dir;
}

export function branches(repo: string): string[] {
  return gitIn(repo, "branch", "--format=%(refname:short)").trim().split("\n").filter(Boolean);
}

export function worktreeList(repo: string): string[] {
  return gitIn(repo, "worktree", "list", "--porcelain")
    .split("\n")
    .filter((line) => line.startsWith("worktree "))
    .map((line) => line.slice(9));
}

/** A 1x1 PNG. */
export const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

/**
 * A gaggle in a fresh repository whose worktree init script says which member it starts (in `starting`), then waits
 * until the test writes a line into the `gate` fifo.
 */
export async function gatedRepo(): Promise<{ team: TeamGaggle; starting: string; open: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
  const starting = join(dir, "starting");
  const gate = join(dir, "gate");
  execFileSync("mkfifo", [gate]);
  const script = `#!/bin/sh\necho "$GG_AGENT_ID" > ${JSON.stringify(starting)}\nread line < ${JSON.stringify(gate)}\n`;
  makeRepo(dir, { ".agents/gg/worktree-init.sh": script });
  const started = await startTeamGaggle({ dir, team: `worktrees_dir = ${JSON.stringify(join(dir, "worktrees"))}` });
  // Opening the fifo for writing waits until the script opens it for reading.
  return { team: started, starting, open: () => writeFile(gate, "go\n") };
}

/** The agent id the init script is starting, once it runs. */
export async function startingAgent(file: string): Promise<string> {
  await until(
    () => existsSync(file) && readFileSync(file, "utf8").endsWith("\n"),
    (ready) => ready,
  );
  return readFileSync(file, "utf8").trim();
}

/** What goose's list_goslings says: every gosling gaggle started, released or not. */
export async function goslings(team: TeamGaggle): Promise<string> {
  const result = (await team.client.callTool({
    name: "execute_child_tool",
    arguments: { server_id: "goose", tool_name: "list_goslings", arguments: {} },
  })) as CallToolResult;
  return textOf(result);
}

/** Where the local principal's team of this id is saved. */
export const teamFile = (team: TeamGaggle, teamId: string) => join(team.dir, "state", "team", "teams", "local", `${teamId}.json`);
