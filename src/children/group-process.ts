// A process that leads its own process group: watched by the reaper, stopped as a group, ended with its group.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { Readable, Writable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { groupAlive, terminateGroup, waitGroupGone } from "./process-group.js";
import { unwatchGroup, watchGroup } from "./reaper.js";

export interface GroupProcessOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** "pipe" for a process that reads its input from gaggle (an MCP server over stdio). */
  stdin: "pipe" | "ignore";
  /** After SIGTERM, how long the group gets before SIGKILL. */
  graceMs: number;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** After the leader exits, how long its pipes get to deliver their last bytes (a process that left the group may hold them). */
const DRAIN_MS = 250;

/**
 * Every process gaggle starts goes through here, so that none outlives it: the group is registered with the
 * watchdog that kills it should gaggle die, a leader that exits takes what it left in its group with it,
 * and stopping escalates from SIGTERM to SIGKILL over the whole group.
 */
export class GroupProcess {
  readonly pid: number;
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** The leader exited and its pipes were drained: all of its output has been delivered. */
  readonly exited: Promise<ProcessExit>;
  /** Also no process of its group is left, and its pipes are closed. */
  readonly ended: Promise<ProcessExit>;
  private exit: ProcessExit | undefined;
  private stopping: Promise<void> | undefined;

  private constructor(
    child: ChildProcess,
    exit: Promise<ProcessExit>,
    private readonly graceMs: number,
  ) {
    this.pid = child.pid!;
    this.stdin = child.stdin;
    this.stdout = child.stdout!;
    this.stderr = child.stderr!;
    watchGroup(this.pid);
    const streams = [this.stdout, this.stderr];
    this.exited = exit.then(async (exit) => {
      this.exit = exit;
      if (groupAlive(this.pid)) this.stopping ??= terminateGroup(this.pid, this.graceMs);
      const open = streams.filter((stream) => !stream.readableEnded);
      await Promise.race([Promise.all(open.map((stream) => once(stream, "end").catch(() => {}))), delay(DRAIN_MS)]);
      return exit;
    });
    this.ended = this.exited.then(async (exit) => {
      await this.stopping;
      unwatchGroup(this.pid);
      for (const stream of streams) stream.destroy();
      return exit;
    });
  }

  /** Resolves once the process runs; rejects with the spawn error (ENOENT, EACCES, ...) when it cannot start. */
  static async start(options: GroupProcessOptions): Promise<GroupProcess> {
    const child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: [options.stdin, "pipe", "pipe"],
      windowsHide: true,
    });
    // Listened for before the spawn settles, so that an instant exit is not missed.
    const exit = new Promise<ProcessExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    await once(child, "spawn");
    // Later errors (a kill of a process already gone, EPIPE on its stdin) surface through the exit path.
    child.on("error", () => {});
    child.stdin?.on("error", () => {});
    return new GroupProcess(child, exit, options.graceMs);
  }

  /** How the leader ended, once it has. */
  get exitInfo(): ProcessExit | undefined {
    return this.exit;
  }

  /** SIGTERM to the group, SIGKILL after the grace period; resolves once the process has ended. */
  async stop(): Promise<ProcessExit> {
    this.stopping ??= terminateGroup(this.pid, this.graceMs);
    return this.ended;
  }

  /** Closes stdin and gives the process up to `ms` to exit by itself with its group, then stops it. */
  async closeGently(ms: number): Promise<ProcessExit> {
    this.stdin?.end();
    if (!(await waitGroupGone(this.pid, Math.min(ms, this.graceMs)))) return this.stop();
    return this.ended;
  }
}
