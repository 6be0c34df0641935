// A process leading its own group whose output is read line by line: a Goose turn, a worktree init script.
import { GroupProcess, type ProcessExit } from "./group-process.js";
import { LineSplitter } from "../../shared/stream-lines.js";

export type { ProcessExit };

export interface LineProcessOptions {
  command: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** After SIGTERM, how long the group gets before SIGKILL. */
  graceMs: number;
  /** A longer output line is cut here, so one runaway line cannot grow without bound in memory. */
  maxLineChars: number;
  onStdoutLine(line: string): void;
  onStderrLine(line: string): void;
}

export class LineProcess {
  /** Resolves once the process has exited, its group is gone, and its output has been read. */
  readonly done: Promise<ProcessExit>;

  private constructor(
    private readonly process: GroupProcess,
    options: LineProcessOptions,
  ) {
    const stdout = new LineSplitter(options.maxLineChars, options.onStdoutLine);
    const stderr = new LineSplitter(options.maxLineChars, options.onStderrLine);
    process.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout.push(chunk));
    process.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
    this.done = process.ended.then((exit) => {
      stdout.flush();
      stderr.flush();
      return exit;
    });
  }

  /** Spawns the process; rejects (ENOENT, EACCES, ...) when the command cannot be started at all. */
  static async start(options: LineProcessOptions): Promise<LineProcess> {
    const { command, argv: args, cwd, env, graceMs } = options;
    return new LineProcess(await GroupProcess.start({ command, args, cwd, env, stdin: "ignore", graceMs }), options);
  }

  get pid(): number {
    return this.process.pid;
  }

  /** SIGTERM the group, SIGKILL it after the grace period; resolves when the process has ended. */
  async stop(): Promise<ProcessExit> {
    await this.process.stop();
    return this.done;
  }
}
