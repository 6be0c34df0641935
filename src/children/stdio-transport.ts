// MCP Transport over a child process that leads its own process group, so shutdown reaches its descendants.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { groupAlive, terminateGroup, waitGroupGone } from "./process-group.js";
import { unwatchGroup, watchGroup } from "./reaper.js";

export interface StdioProcessOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Time given after SIGTERM before SIGKILL. */
  graceMs: number;
  onStderr(chunk: string): void;
  /** A stdout line that is not a JSON-RPC message: reported, then skipped. */
  onStdoutGarbage(line: string, error: unknown): void;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How long a child gets to exit by itself once its stdin is closed, before its group is signalled. */
const STDIN_CLOSE_GRACE_MS = 1000;
/** After the process exits, how long to wait for its last output (a grandchild may hold the pipes open). */
const STDOUT_DRAIN_MS = 250;

export class ProcessGroupTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcessWithoutNullStreams | undefined;
  private pending = "";
  private closed = false;
  /** Set once close() runs its own escalation, so the exit handler does not start a second one. */
  private closing = false;
  private exit: ProcessExit | undefined;

  constructor(private readonly options: StdioProcessOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get exitInfo(): ProcessExit | undefined {
    return this.exit;
  }

  async start(): Promise<void> {
    const { command, args, cwd, env } = this.options;
    const child = spawn(command, args, { cwd, env, detached: true, stdio: "pipe", windowsHide: true });
    this.child = child;
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => this.options.onStderr(chunk));
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => this.onStdout(chunk));
    // EPIPE on a child that died mid-write surfaces through the exit path; nothing more to do here.
    child.stdin.on("error", () => {});
    child.on("exit", (code, signal) => void this.onExit({ code, signal }));
    try {
      await once(child, "spawn");
    } catch (error) {
      this.child = undefined;
      throw spawnError(command, cwd, error);
    }
    child.on("error", (error) => this.onerror?.(error));
    watchGroup(child.pid!);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || !stdin.writable) throw new Error("the child process is not running");
    if (!stdin.write(serializeMessage(message))) await once(stdin, "drain");
  }

  /**
   * Shutdown escalates: close stdin and let the child exit by itself, then SIGTERM the group,
   * then SIGKILL it after the grace period. Resolves once no process of the group is left.
   */
  async close(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return this.finish();
    const pgid = child.pid;
    this.closing = true;
    child.stdin.end();
    if (!(await waitGroupGone(pgid, Math.min(STDIN_CLOSE_GRACE_MS, this.options.graceMs)))) {
      await terminateGroup(pgid, this.options.graceMs);
    }
    unwatchGroup(pgid);
    this.finish();
  }

  private onStdout(chunk: string): void {
    this.pending += chunk;
    let newline: number;
    while ((newline = this.pending.indexOf("\n")) !== -1) {
      const line = this.pending.slice(0, newline).replace(/\r$/, "");
      this.pending = this.pending.slice(newline + 1);
      if (line.trim() === "") continue;
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(line);
      } catch (error) {
        this.options.onStdoutGarbage(line, error);
        continue;
      }
      this.onmessage?.(message);
    }
  }

  private async onExit(exit: ProcessExit): Promise<void> {
    this.exit = exit;
    const pgid = this.child?.pid;
    // A leader that died by itself may leave descendants in its group: they go with it.
    if (pgid && !this.closing && groupAlive(pgid)) {
      void terminateGroup(pgid, this.options.graceMs).then(() => unwatchGroup(pgid));
    } else if (pgid && !this.closing) {
      unwatchGroup(pgid);
    }
    // 'exit' can come before the last output is read; give both pipes a moment to drain.
    const streams = [this.child?.stdout, this.child?.stderr].filter((stream) => stream && !stream.readableEnded);
    const drained = Promise.all(streams.map((stream) => once(stream!, "end").catch(() => {})));
    await Promise.race([drained, delay(STDOUT_DRAIN_MS)]);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

function spawnError(command: string, cwd: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") {
    return new Error(
      `cannot start "${command}": not found (ENOENT) from cwd ${cwd}; check "command" and "cwd", or that it is on PATH`,
      { cause: error },
    );
  }
  if (code === "EACCES") return new Error(`cannot start "${command}": permission denied (EACCES); is it executable?`, { cause: error });
  return new Error(`cannot start "${command}": ${(error as Error).message}`, { cause: error });
}
