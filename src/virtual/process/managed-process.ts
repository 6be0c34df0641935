// One background command: a shell leading its own process group, its output log, its timeout, and how it ends.
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { childEnv } from "../../children/processes/child-env.js";
import { GroupProcess, type ProcessExit } from "../../children/processes/group-process.js";
import type { ProcessTree } from "../../children/processes/process-tree.js";
import { GaggleError, errorMessage } from "../../shared/errors.js";
import { outOfDescriptors } from "../../children/processes/spawn-problem.js";
import { OutputLog } from "./output-log.js";

export type ProcessStatus = "running" | "completed" | "failed" | "timed_out" | "killed";

export interface ProcessSpec {
  command: string;
  /** Absolute and existing. */
  cwd: string;
  /** 0 = none. */
  timeoutMs: number;
  /** Set over gaggle's own environment. */
  env: Record<string, string>;
  /** The principal of the client that started it (see ClientPrincipal): only it may kill the process. */
  owner: string;
  /** The client session that started it: told when the process ends. */
  session: string;
  logDir: string;
  maxOutputBytes: number;
  killGraceMs: number;
}

/** Why the table forgot a finished process and deleted its log, and what a reader of that log can do instead. */
export interface Forgetting {
  why: string;
  hint: string;
}

export class ManagedProcess {
  readonly pid: number;
  readonly startedAt = new Date();
  endedAt: Date | undefined;
  status: ProcessStatus = "running";
  exitCode: number | null = null;
  signal: NodeJS.Signals | null = null;
  readonly output: OutputLog;
  /** Resolves once the process has ended, its group is gone and its log is complete. */
  readonly ended: Promise<void>;
  /** Why gaggle itself killed it, when a limit did (see ProcessTable's process cap). */
  stopNote: string | undefined;
  /** Set by the table as it forgets the process and deletes its log (see ProcessTable.forget). */
  forgotten: Forgetting | undefined;
  private stopReason: "killed" | "timed_out" | undefined;
  private readonly timer: NodeJS.Timeout | undefined;

  /** Set while the log's queue is full: both pipes wait until it has drained. */
  private held = false;

  private constructor(
    readonly spec: ProcessSpec,
    private readonly process: GroupProcess,
  ) {
    this.pid = process.pid;
    this.output = new OutputLog(join(spec.logDir, `${this.pid}-${this.startedAt.getTime()}.log`), spec.maxOutputBytes);
    // Flowing mode: the pipes are emptied as fast as the log's writes keep up, whatever the log keeps.
    const pipes = [process.stdout, process.stderr];
    for (const stream of pipes) stream.on("data", (chunk: Buffer) => this.output.write(chunk) || this.hold(pipes));
    // The shell may leave background jobs behind, in its group or not: they end with it, and their output goes to the log too.
    this.ended = process.ended.then((exit) => this.finish(exit)).catch(() => {});
    if (spec.timeoutMs > 0) {
      this.timer = setTimeout(() => void this.stop("timed_out"), spec.timeoutMs);
      this.timer.unref();
    }
  }

  /** Starts `sh -c command` in a new process group. */
  static async start(spec: ProcessSpec): Promise<ManagedProcess> {
    try {
      const process = await GroupProcess.start({
        command: "/bin/sh",
        args: ["-c", spec.command],
        cwd: spec.cwd,
        env: childEnv(spec.env, true),
        stdin: "ignore",
        graceMs: spec.killGraceMs,
      });
      const started = new ManagedProcess(spec, process);
      await started.logOpened();
      return started;
    } catch (error) {
      if (error instanceof GaggleError) throw error;
      const descriptors = outOfDescriptors(error);
      if (descriptors) throw new GaggleError("SERVER_FAILED", `could not start the command: ${descriptors}`, { cause: error });
      throw new GaggleError("SERVER_FAILED", `could not start the command: ${errorMessage(error)}`, {
        hint: "gaggle could not spawn /bin/sh; check the system's process and file limits, then retry",
        cause: error,
      });
    }
  }

  /** Resolves once the output log exists; when it cannot be created, the process is stopped and the error says why. */
  private async logOpened(): Promise<void> {
    try {
      await this.output.opened();
    } catch (error) {
      void this.process.stop();
      const descriptors = outOfDescriptors(error);
      if (descriptors) throw new GaggleError("SERVER_FAILED", `could not start the command: ${descriptors}`, { cause: error });
      throw new GaggleError("SERVER_FAILED", `cannot write the output log in ${this.spec.logDir}: ${errorMessage(error)}`, {
        hint: "check that [virtual.process] log_dir (or the state directory) is writable",
        cause: error,
      });
    }
  }

  /**
   * Opens the output log to read. A reader holds the process found in the table, or in an agent's terminal, while the
   * table may forget it and delete its log at any moment, even while this open is under way: a log missing for that
   * reason fails naming the process and why it was forgotten, and one missing for any other reason says so too,
   * never with the file system's bare ENOENT. Once open, the log reads whole, deleted or not.
   */
  async openLog(): Promise<FileHandle> {
    try {
      return await open(this.output.path, "r");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      if (this.forgotten) {
        throw new GaggleError(
          "NOT_FOUND",
          `process ${this.pid} ended (${this.status}) and gaggle has forgotten it, deleting its output log: ${this.forgotten.why}`,
          { hint: this.forgotten.hint, cause: error },
        );
      }
      throw new GaggleError(
        "SERVER_FAILED",
        `the output log of process ${this.pid} (${this.output.path}) is gone: something other than gaggle deleted it`,
        {
          hint: "its output is lost; nothing but gaggle should delete files in [virtual.process] log_dir while gaggle runs",
          cause: error,
        },
      );
    }
  }

  get command(): string {
    return this.spec.command;
  }

  get running(): boolean {
    return this.status === "running";
  }

  get tree(): ProcessTree {
    return this.process.tree;
  }

  get runtimeMs(): number {
    return (this.endedAt ?? new Date()).getTime() - this.startedAt.getTime();
  }

  /** SIGTERM to the whole group, SIGKILL after the grace period; resolves once the process has ended. */
  async stop(reason: "killed" | "timed_out", note?: string): Promise<void> {
    if (this.process.exitInfo === undefined && this.stopReason === undefined) {
      this.stopReason = reason;
      this.stopNote = note;
    }
    await this.process.stop();
    await this.ended;
  }

  /** Pauses the pipes until the log has written what it queued, so that its queue stays bounded. */
  private hold(pipes: NodeJS.ReadableStream[]): void {
    if (this.held) return;
    this.held = true;
    for (const pipe of pipes) pipe.pause();
    void this.output.drained().then(() => {
      this.held = false;
      for (const pipe of pipes) pipe.resume();
    });
  }

  private async finish({ code, signal }: ProcessExit): Promise<void> {
    clearTimeout(this.timer);
    this.exitCode = code;
    this.signal = signal;
    try {
      await this.output.close();
    } finally {
      this.endedAt = new Date();
      this.status = this.stopReason ?? (code === 0 ? "completed" : "failed");
    }
  }
}
