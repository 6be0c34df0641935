// Runs the gaggle command line to its end, as a user would from a shell.
import { spawn } from "node:child_process";
import { CLI } from "./paths.js";

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
