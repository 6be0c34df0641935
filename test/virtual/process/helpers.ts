// Shared by the process child's tests: a config with a private state dir, and calls to gg_process_* through execute_child_tool.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { failureOf, textOf, type Failure } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";

export interface ProcessConfig {
  /** The config text to start gaggle with. */
  text: string;
  /** Its private state directory; process logs go to `<stateDir>/process`. */
  stateDir: string;
}

/** A config whose state dir is a fresh temporary folder, with `extra` TOML appended. */
export function processConfig(extra = "", gateway = ""): ProcessConfig {
  const stateDir = mkdtempSync(join(tmpdir(), "gaggle-state-"));
  return { text: `[gateway]\nstate_dir = ${JSON.stringify(stateDir)}\n${gateway}\n${extra}\n`, stateDir };
}

export function callProcess(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return client.callTool({
    name: "execute_child_tool",
    arguments: { server_id: "process", tool_name: tool, arguments: args },
  }) as Promise<CallToolResult>;
}

/** Calls a gg_process_* tool and parses its JSON answer; throws if the call failed. */
export async function processJson<T = Record<string, unknown>>(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<T> {
  const result = await callProcess(client, tool, args);
  if (result.isError) throw new Error(`${tool} failed: ${textOf(result)}`);
  return JSON.parse(textOf(result)) as T;
}

/** The failure body of a call that must fail. */
export async function processFailure(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<Failure> {
  return failureOf(await callProcess(client, tool, args));
}

export interface Started {
  pid: number;
  status: string;
  command: string;
  cwd: string;
  started_at: string;
  timeout_ms: number;
  log_uri: string;
  log_file: string;
}

export interface Status extends Omit<Started, "status"> {
  status: "running" | "completed" | "failed" | "timed_out" | "killed";
  ended_at: string | null;
  runtime_ms: number;
  exit_code: number | null;
  signal: string | null;
  owned: boolean;
  note?: string;
  output_bytes: number;
  output_lines: number;
  truncated: boolean;
  dropped_bytes: number;
  head_lines: number;
  tail_lines: number;
  omitted_lines: number;
  output: string;
}

export function run(client: Client, command: string, extra: Record<string, unknown> = {}): Promise<Started> {
  return processJson<Started>(client, "gg_process_run", { command, ...extra });
}

export function status(client: Client, pid: number, extra: Record<string, unknown> = {}): Promise<Status> {
  return processJson<Status>(client, "gg_process_status", { pid, ...extra });
}

/** Polls until the process has ended; returns its last status. */
export function ended(client: Client, pid: number, ms = 10_000, extra: Record<string, unknown> = {}): Promise<Status> {
  return until(
    () => status(client, pid, extra),
    (s) => s.status !== "running",
    ms,
  );
}
