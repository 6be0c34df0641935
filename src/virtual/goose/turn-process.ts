// Owns the one `goose run` process of a turn: its own process group, its output split into lines, its end.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { once } from "node:events";
import type { Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { groupAlive, terminateGroup } from "../../children/process-group.js";
import { unwatchGroup, watchGroup } from "../../children/reaper.js";

export interface TurnProcessOptions {
  command: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** After SIGTERM, how long the group gets before SIGKILL. */
  graceMs: number;
  /** A longer stdout line is cut here, so one runaway line cannot grow without bound in memory. */
  maxLineBytes: number;
  onStdoutLine(line: string): void;
  onStderrLine(line: string): void;
}

export interface TurnExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** After the process exits, how long to wait for its last output (a grandchild may hold the pipes open). */
const DRAIN_MS = 250;

export class TurnProcess {
  /** Resolves once the process has exited, its group is gone, and its output has been read. */
  readonly done: Promise<TurnExit>;
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly child: ChildProcessByStdio<null, Readable, Readable>,
    private readonly options: TurnProcessOptions,
  ) {
    const stdout = new LineSplitter(options.maxLineBytes, options.onStdoutLine);
    const stderr = new LineSplitter(options.maxLineBytes, options.onStderrLine);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout.push(chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
    this.done = this.waitForEnd().then((exit) => {
      stdout.flush();
      stderr.flush();
      return exit;
    });
  }

  /** Spawns the turn; rejects (ENOENT, EACCES, ...) when the command cannot be started at all. */
  static async start(options: TurnProcessOptions): Promise<TurnProcess> {
    const child = spawn(options.command, options.argv, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
    });
    await once(child, "spawn");
    // Later errors (a failed kill of a process already gone) surface through the exit path.
    child.on("error", () => {});
    watchGroup(child.pid!);
    return new TurnProcess(child, options);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** SIGTERM the group, SIGKILL it after the grace period; resolves when the turn has ended. */
  async stop(): Promise<TurnExit> {
    this.stopping ??= terminateGroup(this.pid, this.options.graceMs);
    await this.stopping;
    return this.done;
  }

  private async waitForEnd(): Promise<TurnExit> {
    const child = this.child;
    const [code, signal] = (child.exitCode !== null || child.signalCode !== null
      ? [child.exitCode, child.signalCode]
      : await once(child, "exit")) as [number | null, NodeJS.Signals | null];
    // Extensions Goose started may outlive it in its group: they go with it.
    if (groupAlive(this.pid)) await (this.stopping ??= terminateGroup(this.pid, this.options.graceMs));
    unwatchGroup(this.pid);
    const open = [child.stdout, child.stderr].filter((stream) => !stream.readableEnded);
    await Promise.race([Promise.all(open.map((stream) => once(stream, "end").catch(() => {}))), delay(DRAIN_MS)]);
    return { code, signal };
  }
}

/** Splits a stream into lines; a line longer than `maxBytes` is cut, and the rest of it skipped. */
class LineSplitter {
  private pending = "";
  private skipping = false;

  constructor(
    private readonly maxBytes: number,
    private readonly emit: (line: string) => void,
  ) {}

  push(chunk: string): void {
    let text = chunk;
    let newline: number;
    while ((newline = text.indexOf("\n")) !== -1) {
      const piece = text.slice(0, newline);
      text = text.slice(newline + 1);
      if (this.skipping) this.skipping = false;
      else this.emit((this.pending + piece).replace(/\r$/, ""));
      this.pending = "";
    }
    if (this.skipping) return;
    this.pending += text;
    if (this.pending.length > this.maxBytes) {
      this.emit(`${this.pending.slice(0, this.maxBytes)} …[line cut at ${this.maxBytes} characters]`);
      this.pending = "";
      this.skipping = true;
    }
  }

  flush(): void {
    if (this.pending !== "" && !this.skipping) this.emit(this.pending.replace(/\r$/, ""));
    this.pending = "";
  }
}
