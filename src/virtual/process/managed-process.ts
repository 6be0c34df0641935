// One background command: a shell leading its own process group, its output log, its timeout, and how it ends.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { childEnv } from "../../children/child-env.js";
import { groupAlive, signalGroup, terminateGroup } from "../../children/process-group.js";
import { unwatchGroup, watchGroup } from "../../children/reaper.js";
import { GaggleError, errorMessage } from "../../errors.js";
import { OutputLog } from "./output-log.js";

export type ProcessStatus = "running" | "completed" | "failed" | "timed_out" | "killed";

export interface ProcessSpec {
  command: string;
  /** Absolute and existing. */
  cwd: string;
  /** 0 = none. */
  timeoutMs: number;
  /** The client session that started it. */
  owner: string;
  logDir: string;
  maxOutputBytes: number;
  killGraceMs: number;
}

/** After the group is gone, how long its pipes get to deliver their last bytes (a process that left the group may hold them). */
const DRAIN_MS = 500;

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
  private stopReason: "killed" | "timed_out" | undefined;
  /** The shell has exited; what remains is stopping its leftovers and draining its output. */
  private exited = false;
  private readonly timer: NodeJS.Timeout | undefined;

  private constructor(
    readonly spec: ProcessSpec,
    private readonly child: ChildProcess,
  ) {
    this.pid = child.pid!;
    watchGroup(this.pid);
    try {
      this.output = new OutputLog(join(spec.logDir, `${this.pid}-${this.startedAt.getTime()}.log`), spec.maxOutputBytes);
    } catch (error) {
      signalGroup(this.pid, "SIGKILL");
      unwatchGroup(this.pid);
      throw new GaggleError("SERVER_FAILED", `cannot write the output log in ${spec.logDir}: ${errorMessage(error)}`, {
        hint: "check that [virtual.process] log_dir (or the state directory) is writable",
        cause: error,
      });
    }
    // Flowing mode: the pipes are emptied as fast as the process fills them, whatever the log keeps.
    for (const stream of [child.stdout, child.stderr]) stream?.on("data", (chunk: Buffer) => this.output.write(chunk));
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    this.ended = exited.then(([code, signal]) => this.finish(code, signal)).catch(() => {});
    if (spec.timeoutMs > 0) {
      this.timer = setTimeout(() => void this.stop("timed_out"), spec.timeoutMs);
      this.timer.unref();
    }
  }

  /** Starts `sh -c command` in a new process group. */
  static async start(spec: ProcessSpec): Promise<ManagedProcess> {
    const child = spawn("/bin/sh", ["-c", spec.command], {
      cwd: spec.cwd,
      env: childEnv({}, true),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (child.pid === undefined) {
      const [error] = (await once(child, "error").catch((caught: unknown) => [caught])) as [unknown];
      throw new GaggleError("SERVER_FAILED", `could not start the command: ${errorMessage(error)}`, {
        hint: "gaggle could not spawn /bin/sh; check the system's process and file limits, then retry",
        cause: error,
      });
    }
    child.on("error", () => {}); // a failed kill() on an exited child; the exit path reports everything
    return new ManagedProcess(spec, child);
  }

  get command(): string {
    return this.spec.command;
  }

  get running(): boolean {
    return this.status === "running";
  }

  get runtimeMs(): number {
    return (this.endedAt ?? new Date()).getTime() - this.startedAt.getTime();
  }

  /** SIGTERM to the whole group, SIGKILL after the grace period; resolves once the process has ended. */
  async stop(reason: "killed" | "timed_out"): Promise<void> {
    if (!this.exited) {
      this.stopReason ??= reason;
      await terminateGroup(this.pid, this.spec.killGraceMs);
    }
    await this.ended;
  }

  private async finish(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    this.exited = true;
    clearTimeout(this.timer);
    this.exitCode = code;
    this.signal = signal;
    // The shell may leave background jobs in its group: they end with it, so nothing outlives its command.
    if (groupAlive(this.pid)) await terminateGroup(this.pid, this.spec.killGraceMs);
    unwatchGroup(this.pid);
    const streams = [this.child.stdout, this.child.stderr].filter((stream) => stream && !stream.readableEnded);
    await Promise.race([Promise.all(streams.map((stream) => once(stream!, "end").catch(() => {}))), delay(DRAIN_MS)]);
    for (const stream of streams) stream!.destroy();
    try {
      this.output.close();
    } finally {
      this.endedAt = new Date();
      this.status = this.stopReason ?? (code === 0 ? "completed" : "failed");
    }
  }
}
