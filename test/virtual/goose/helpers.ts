// Shared by the goose tests: a gaggle whose [virtual.goose] runs the fake goose, and ways to drive and observe it.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
export { failureOf } from "../../helpers/gaggle.js";
import { fixture } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

export const FAKE_GOOSE = fixture("goose/goose.mjs");

/** One line of the fake's argv log: a run, or a grandchild it started. */
export interface FakeRun {
  pid: number;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  grandchild?: number;
}

export interface GooseGaggle {
  gaggle: RunningGaggle;
  /** The temp folder: cwd of goose, its GOOSE_PATH_ROOT and argv log live here. */
  dir: string;
  call(tool: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  text(tool: string, args?: Record<string, unknown>): Promise<string>;
  /** Starts a gosling and returns its id. */
  run(prompt: string, options?: string[]): Promise<string>;
  /** Polls get_gosling_status until the gosling is idle or released; returns that text. */
  settle(id: string, ms?: number): Promise<string>;
  runs(): FakeRun[];
  /** Pids of every fake goose run and grandchild so far. */
  pids(): number[];
}

/** A config whose [virtual.goose] table runs the fake; `goose` adds keys to that table, `gateway` to [gateway]. */
export function gooseConfig(dir: string, goose = "", gateway = ""): string {
  const env = `{ GOOSE_PATH_ROOT = ${JSON.stringify(join(dir, "goose-root"))}, FAKE_GOOSE_ARGV_LOG = ${JSON.stringify(join(dir, "argv.jsonl"))} }`;
  return [
    "[gateway]",
    `state_dir = ${JSON.stringify(join(dir, "state"))}`,
    ...(/^shutdown_grace_ms =/m.test(gateway) ? [] : ["shutdown_grace_ms = 500"]),
    gateway,
    "",
    "[virtual.goose]",
    ...(/^command =/m.test(goose) ? [] : [`command = ${JSON.stringify(FAKE_GOOSE)}`]),
    `cwd = ${JSON.stringify(dir)}`,
    `env = ${env}`,
    goose,
    "",
  ].join("\n");
}

export async function startGooseGaggle(goose = "", gateway = ""): Promise<GooseGaggle> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
  const gaggle = await startGaggle(gooseConfig(dir, goose, gateway), { env: { XDG_STATE_HOME: join(dir, "xdg-state") } });
  const call = async (tool: string, args: Record<string, unknown> = {}) =>
    gaggle.meta("execute_child_tool", { server_id: "goose", tool_name: tool, arguments: args });
  const text = async (tool: string, args: Record<string, unknown> = {}) => textOf(await call(tool, args));
  const runs = () => readRuns(join(dir, "argv.jsonl"));
  return {
    gaggle,
    dir,
    call,
    text,
    run: async (prompt, options) => idOf(await text("run_goose", options ? { prompt, options } : { prompt })),
    settle: (id, ms = 15_000) =>
      until(
        () => text("get_gosling_status", { process_id: id }),
        (status) => /Activity: (IDLE|RELEASED)/.test(status),
        ms,
      ),
    runs,
    pids: () => pidsOf(runs()),
  };
}

export function readRuns(path: string): FakeRun[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FakeRun);
}

export function idOf(text: string): string {
  const match = /Started gosling ([0-9a-f-]{36})/.exec(text);
  if (!match) throw new Error(`no gosling id in: ${text}`);
  return match[1]!;
}

/** The transcript part of get_gosling_output: the lines after the "=== Output" line and its blank line. */
export function transcriptOf(output: string): string[] {
  const lines = output.split("\n");
  const start = lines.findIndex((line) => line.startsWith("=== Output"));
  const end = lines.indexOf("=== Pagination ===");
  return lines.slice(start + 2, end === -1 ? undefined : end - 1);
}

/** Every process the fake goose runs started: each turn's goose, and the grandchild it left when asked to. */
export function pidsOf(runs: FakeRun[]): number[] {
  return runs.flatMap((run) => (run.grandchild ? [run.pid, run.grandchild] : [run.pid]));
}

/**
 * User turns the fake goose has saved to its sessions under `dir` ($GOOSE_PATH_ROOT/data/sessions). A turn is
 * saved just before it runs, so a saved turn means its run is under way, signal handlers set up. A session file
 * just created is still empty.
 */
export function savedUserTurns(dir: string): number {
  const sessions = join(dir, "goose-root", "data", "sessions");
  if (!existsSync(sessions)) return 0;
  const messages = readdirSync(sessions)
    .filter((file) => file.endsWith(".json"))
    .flatMap((file) => {
      try {
        return (JSON.parse(readFileSync(join(sessions, file), "utf8")) as { messages: Array<{ role: string }> }).messages;
      } catch {
        return [];
      }
    });
  return messages.filter((message) => message.role === "user").length;
}
