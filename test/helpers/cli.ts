// Runs the gaggle command line to its end, as a user would from a shell.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import type { ChildConfig } from "../../src/config/schema.js";
import { CLI } from "./paths.js";
import { waitGone } from "./processes.js";

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Resolves once the process has exited and both of its streams are read to their end. */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** A daemon's live state as `gaggle status --json` gives it: no `daemon` when none runs for the config. */
export interface DaemonStatus {
  daemon?: { pid: number };
  children: Array<{ server_id: string; pid: number | null }>;
}

export async function daemonStatus(config: string, env: NodeJS.ProcessEnv): Promise<DaemonStatus> {
  const { code, stdout, stderr } = await runCli(["status", "--json", "--config", config], { env });
  if (code !== 0) throw new Error(`gaggle status ended with ${code}:\n${stderr}`);
  return JSON.parse(stdout) as DaemonStatus;
}

/** Stops the daemon of `config` started from `env`, if one runs; resolves with the pids of it and its children that outlived it. */
export async function stopDaemon(config: string, env: NodeJS.ProcessEnv): Promise<number[]> {
  const { daemon, children } = await daemonStatus(config, env).catch((): DaemonStatus => ({ children: [] }));
  if (daemon === undefined) return [];
  await runCli(["stop", "--config", config], { env });
  const pids = [daemon.pid, ...children.map((child) => child.pid)].filter((pid): pid is number => typeof pid === "number");
  return waitGone(pids);
}

/**
 * A maker of things a test file starts (a client's home with its daemon), each stopped once the file's tests are
 * done: call it in the file's top level.
 */
export function stoppedAfterAll<T extends { stop(): Promise<void> }>(make: () => T): () => T {
  const made: T[] = [];
  afterAll(async () => {
    for (const item of made.splice(0)) await item.stop();
  });
  return () => {
    const item = make();
    made.push(item);
    return item;
  };
}

/** What `gaggle import SOURCE` wrote into a new config: the children as gaggle loads them, and the removals it printed. */
export interface Imported {
  run: CliRun;
  children: Map<string, ChildConfig>;
  /** The commands it printed that take each server out of its client. */
  removals: string[];
}

/** `gaggle import SOURCE` in a person's project folder, into a new config in their home, loaded with `loadEnv`. */
export async function importInto(source: string, at: { dir: string; project: string; env: NodeJS.ProcessEnv }, loadEnv = at.env): Promise<Imported> {
  const config = join(at.dir, `imported-${source}.toml`);
  const run = await runCli(["import", source, "--config", config], { cwd: at.project, env: at.env });
  if (run.code !== 0) throw new Error(`gaggle import ${source} ended with ${run.code}:\n${run.stdout}\n${run.stderr}`);
  const children = new Map(loadConfig(config, loadEnv).children.map((child) => [child.name, child]));
  const removals = /^then in [^,]+, so that each runs once, through gaggle: (.*)$/m.exec(run.stdout)?.[1]?.split("; ") ?? [];
  return { run, children, removals };
}
