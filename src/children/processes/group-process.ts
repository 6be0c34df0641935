// A process leading its own group and marking its descendants with a token: watched by the reaper, stopped and ended as one tree.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { textSocket } from "../../shared/stream-lines.js";
import { childToken, TOKEN_VAR } from "./child-token.js";
import { terminateTree, waitTreeGone, type ProcessTree } from "./process-tree.js";
import { unwatchTree, watchTree } from "./reaper.js";

export interface GroupProcessOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** "pipe" for a process that reads its input from gaggle (an MCP server over stdio). */
  stdin: "pipe" | "ignore";
  /** After SIGTERM, how long the group gets before SIGKILL. */
  graceMs: number;
  /**
   * Reads stdout as text, each chunk as it comes (see readStdout); answering false stops reading until
   * `stdout.resume()`. Without it, `stdout` is left for the caller to read.
   */
  onStdout?: (text: string) => boolean | void;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** After the leader exits, how long its pipes get to deliver their last bytes (a process that left the group may hold them). */
const DRAIN_MS = 250;

/** Set once gaggle is exiting: a close no longer waits for a process to exit by itself once its stdin is closed. */
let exiting = false;

/**
 * gaggle is exiting, and a client gives it little time to: every process closed from now on is sent SIGTERM as its
 * stdin closes, so that all of them are signalled together. What outlives gaggle's exit the watchdog stops.
 */
export function closeQuickly(): void {
  exiting = true;
}

/**
 * Every process gaggle starts goes through here, so that none outlives it: it leads a group of its own and
 * carries a token of its own in its environment, which its descendants inherit. That tree (the group, and
 * whatever carries the token) is registered with the watchdog that kills it should gaggle die, a leader that
 * exits takes what it left behind with it, and stopping escalates from SIGTERM to SIGKILL over the whole tree.
 */
export class GroupProcess {
  readonly pid: number;
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** The leader exited and its pipes were drained: all of its output has been delivered. */
  readonly exited: Promise<ProcessExit>;
  /** Also no process of its tree is left, and its pipes are closed. */
  readonly ended: Promise<ProcessExit>;
  /** Its group and token: what counts and ends as this process. */
  readonly tree: ProcessTree;
  private exit: ProcessExit | undefined;
  private stopping: Promise<void> | undefined;

  private constructor(
    child: ChildProcess,
    token: string,
    exit: Promise<ProcessExit>,
    private readonly graceMs: number,
    onStdout: ((text: string) => boolean | void) | undefined,
  ) {
    this.pid = child.pid!;
    this.stdin = child.stdin;
    this.stdout = onStdout ? readStdout(child.stdout!, onStdout) : child.stdout!;
    this.stderr = child.stderr!;
    this.tree = { pgid: this.pid, token };
    watchTree(this.tree);
    const streams = [this.stdout, this.stderr];
    const own = this.stdout !== child.stdout;
    this.exited = exit.then(async (exit) => {
      this.exit = exit;
      // Node reads a child's own streams on at its exit, paused or not (drain.test.ts); gaggle's socket the same.
      if (own) this.stdout.resume();
      // What the leader left behind goes with it (terminateTree returns at once when nothing is left).
      this.stopping ??= terminateTree(this.tree, this.graceMs);
      const open = streams.filter((stream) => !stream.readableEnded);
      await Promise.race([Promise.all(open.map((stream) => once(stream, "end").catch(() => {}))), delay(DRAIN_MS)]);
      return exit;
    });
    this.ended = this.exited.then(async (exit) => {
      await this.stopping;
      unwatchTree(this.tree);
      for (const stream of streams) stream.destroy();
      return exit;
    });
  }

  /** Resolves once the process runs; rejects with the spawn error (ENOENT, EACCES, ...) when it cannot start. */
  static async start(options: GroupProcessOptions): Promise<GroupProcess> {
    const { token, value } = childToken();
    const child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: { ...options.env, [TOKEN_VAR]: value },
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
    return new GroupProcess(child, token, exit, options.graceMs, options.onStdout);
  }

  /** How the leader ended, once it has. */
  get exitInfo(): ProcessExit | undefined {
    return this.exit;
  }

  /** SIGTERM to the tree, SIGKILL after the grace period; resolves once the process has ended. */
  async stop(): Promise<ProcessExit> {
    this.stopping ??= terminateTree(this.tree, this.graceMs);
    return this.ended;
  }

  /** Closes stdin and gives the process up to `ms` to exit by itself with its tree, then stops it. */
  async closeGently(ms: number): Promise<ProcessExit> {
    this.stdin?.end();
    if (exiting || !(await waitTreeGone(this.tree, Math.min(ms, this.graceMs)))) return this.stop();
    return this.ended;
  }
}

/**
 * A process's stdout read through textSocket, on the libuv handle of the stream child_process made for it (an
 * AF_UNIX socket, as libuv gives every child's stdio): the stream lets go of the handle unread and without closing it
 * (its `_handle`, which Node's own streams and child_process share in the same way), and is destroyed, so that
 * child_process still sees its stdout close. Node's `handle` option makes the socket on it, as child_process itself
 * does. A stream with no such handle is read through its 'data' events (test/children/processes/own-stdout.test.ts pins
 * that the handle is taken).
 */
function readStdout(stream: Readable, onText: (text: string) => boolean | void): Readable {
  const pipe = stream as Readable & { _handle?: { readStart?: unknown } | null };
  const handle = pipe._handle;
  if (!(stream instanceof Socket) || typeof handle?.readStart !== "function" || stream.readableFlowing !== null) {
    stream.setEncoding("utf8").on("data", (chunk: string) => {
      if (onText(chunk) === false) stream.pause();
    });
    return stream;
  }
  pipe._handle = null;
  stream.destroy();
  return textSocket({ handle }, onText);
}
