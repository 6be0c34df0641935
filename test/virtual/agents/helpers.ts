// Shared by the agents tests: a gaggle whose [agents.fake] runs the fake ACP agent, and ways to drive and observe it.
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { fixture } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

export const FAKE_AGENT = fixture("acp/agent.mjs");

/** Folders of one test: the agent's root (its cwd), a folder outside it, and the fake's state and pid log. */
export interface AgentDirs {
  dir: string;
  root: string;
  outside: string;
  pids: string;
  state: string;
}

export function agentDirs(): AgentDirs {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-agents-"));
  const root = join(dir, "root");
  const outside = join(dir, "outside");
  for (const folder of [root, outside]) mkdirSync(folder);
  return { dir, root, outside, pids: join(dir, "pids.log"), state: join(dir, "fake-state") };
}

/** The table `[agents.NAME]` that runs the fake agent in `cwd`, with `env` (the fake's switches) in its environment. */
export function fakeAgentTable(name: string, cwd: string, env: Record<string, string>): string {
  const vars = Object.entries(env).map(([key, value]) => `${key} = ${JSON.stringify(value)}`);
  return [
    `[agents.${name}]`,
    `command = ${JSON.stringify(process.execPath)}`,
    `args = [${JSON.stringify(FAKE_AGENT)}]`,
    `cwd = ${JSON.stringify(cwd)}`,
    `env = { ${vars.join(", ")} }`,
  ].join("\n");
}

/** A config with [agents.fake] (keys of `agent` added to its table) and `rest` after it. */
export function agentConfig(dirs: AgentDirs, agent = "", rest = ""): string {
  return [
    "[gateway]",
    `state_dir = ${JSON.stringify(join(dirs.dir, "state"))}`,
    "shutdown_grace_ms = 500",
    "",
    fakeAgentTable("fake", dirs.root, { FAKE_ACP_PIDS: dirs.pids, FAKE_ACP_STATE: dirs.state }),
    agent,
    "",
    rest,
  ].join("\n");
}

/** The pids of every fake agent process started so far. */
export function agentPids(dirs: AgentDirs): number[] {
  if (!existsSync(dirs.pids)) return [];
  return readFileSync(dirs.pids, "utf8").split("\n").filter(Boolean).map(Number);
}

/** Calls a tool of the agents child through execute_child_tool. */
export async function callAgents(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({
    name: "execute_child_tool",
    arguments: { server_id: "agents", tool_name: tool, arguments: args },
  })) as CallToolResult;
}

export async function agentsText(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await callAgents(client, tool, args);
  if (result.isError) throw new Error(`${tool} failed: ${textOf(result)}`);
  return textOf(result);
}

/** Starts a session and returns its id. */
export async function startSession(client: Client, args: Record<string, unknown>): Promise<string> {
  const text = await agentsText(client, "start_agent", args);
  const match = /Started agent session ([0-9a-f-]{36})/.exec(text);
  if (!match) throw new Error(`no session id in: ${text}`);
  return match[1]!;
}

/** Waits until the session's prompt `number` has ended; returns its status text. */
export async function settled(client: Client, id: string, number: number, ms = 15_000): Promise<string> {
  return until(
    () => agentsText(client, "get_agent_status", { session_id: id }),
    (text) => new RegExp(`^  ${number}\\. .*\\((completed|cancelled|failed|dropped)`, "m").test(text),
    ms,
  );
}

/** The whole transcript of a session. */
export async function transcript(client: Client, id: string): Promise<string> {
  return agentsText(client, "get_agent_output", { session_id: id, limit: 10_000 });
}

/** `env`: gaggle's environment, which the agent inherits. */
export async function startAgentsGaggle(
  dirs: AgentDirs,
  agent = "",
  rest = "",
  client?: Client,
  env: Record<string, string> = {},
): Promise<RunningGaggle> {
  return startGaggle(agentConfig(dirs, agent, rest), { env: { XDG_STATE_HOME: join(dirs.dir, "xdg-state"), ...env }, ...(client && { client }) });
}
