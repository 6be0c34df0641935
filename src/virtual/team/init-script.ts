// Owns running a new worktree's ./.agents/gg/worktree-init.sh: in the worktree, in its own process group, timed.
import { join } from "node:path";
import { isExecutableFile, isFile } from "../../shared/fs-probes.js";
import { LineProcess } from "../../children/processes/line-process.js";

export const INIT_SCRIPT = "./.agents/gg/worktree-init.sh";
/** A script still running after this long is stopped, and the add fails. */
export const INIT_SCRIPT_TIMEOUT_MS = 10 * 60_000;
/** Lines of its output kept for the answer (stdout and stderr together, in order). */
const OUTPUT_LINES = 200;

export type InitOutcome = { ran: false } | { ran: true; ok: true; output: string } | { ran: true; ok: false; output: string; problem: string };

export interface InitOptions {
  worktree: string;
  env: Record<string, string>;
  graceMs: number;
  timeoutMs?: number;
}

/** Runs the script if the checkout has one: directly when it is executable (its #! line counts), else with /bin/sh. */
export async function runInitScript(options: InitOptions): Promise<InitOutcome> {
  const script = join(options.worktree, INIT_SCRIPT);
  if (!(await isFile(script))) return { ran: false };
  const [command, argv] = (await isExecutableFile(script)) ? [INIT_SCRIPT, []] : ["/bin/sh", [INIT_SCRIPT]];
  const lines: string[] = [];
  const keep = (line: string) => void (lines.push(line) > OUTPUT_LINES && lines.shift());
  let running: LineProcess;
  try {
    running = await LineProcess.start({
      command,
      argv,
      cwd: options.worktree,
      env: options.env,
      graceMs: options.graceMs,
      maxLineChars: 4096,
      onStdoutLine: keep,
      onStderrLine: keep,
    });
  } catch (error) {
    return { ran: true, ok: false, output: "", problem: `${INIT_SCRIPT} could not be started: ${(error as Error).message}` };
  }
  const timeoutMs = options.timeoutMs ?? INIT_SCRIPT_TIMEOUT_MS;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void running.stop();
  }, timeoutMs);
  const exit = await running.done.finally(() => clearTimeout(timer));
  const output = lines.join("\n");
  if (timedOut) return { ran: true, ok: false, output, problem: `${INIT_SCRIPT} was stopped after ${timeoutMs / 1000}s` };
  if (exit.signal) return { ran: true, ok: false, output, problem: `${INIT_SCRIPT} was killed by ${exit.signal}` };
  if (exit.code !== 0) return { ran: true, ok: false, output, problem: `${INIT_SCRIPT} failed with exit code ${exit.code}` };
  return { ran: true, ok: true, output };
}
