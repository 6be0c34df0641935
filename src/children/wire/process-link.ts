// A child process's stdio as a link, the process leading its own process group, so shutdown reaches its descendants.
import { ErrorCode, McpError, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { once } from "node:events";
import { GroupProcess, type ProcessExit } from "../processes/group-process.js";
import { encodeMessage, messageLines } from "../../shared/json-rpc-codec.js";
import { SENT, type Link, type LinkReceiver } from "../../shared/link.js";
import type { OutputHold } from "./output-hold.js";
import { TurnWriter } from "../../shared/stream-lines.js";
import { spawnProblem } from "../processes/spawn-problem.js";

export type { ProcessExit };

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
  /** Asked after each chunk of stdout is read: while it holds, no more is read (the child blocks on a full pipe). */
  hold: OutputHold;
}

/**
 * The most requests held for one write to a child's stdin. The first of a turn is written at once and the child starts
 * on it; joined in groups, the later ones reach it while gaggle reads on, in fewer writes (and fewer wake-ups of the
 * child) than one each. Measured with 64 calls in flight (bench/chain.mjs): groups of 4 and 8 passed more calls than a
 * write each, 8 the most, and a whole turn's requests in one write passed the fewest, the child idle until the turn
 * ended.
 */
const REQUESTS_A_WRITE = 8;

/** How long a child gets to exit by itself once its stdin is closed, before its group is signalled. */
const STDIN_CLOSE_GRACE_MS = 1000;

/** Each line the child writes to stdout is decoded once and handed to the receiver with its text. */
export class ProcessLink implements Link {
  private receiver: LinkReceiver | undefined;
  private process: GroupProcess | undefined;
  private closed = false;
  /** Resolves once the close has been told to the receiver. */
  private readonly told: Promise<void>;
  private tell!: () => void;
  /** stdout is paused until the hold lets it be read again. */
  private paused = false;
  /** Settles when stdin has drained (or failed): the one wait of every write that found its buffer full. */
  private drained: Promise<void> | undefined;
  /** The child's stdin, once started. */
  private stdinLines: TurnWriter | undefined;
  private readonly lines = messageLines(
    (message, line) => this.receiver?.receive(message, undefined, line),
    (error, line) => this.options.onStdoutGarbage(line, error),
    (line) => this.receiver?.receiveLine?.(line) === true,
  );

  /** Each chunk of stdout as it is read; false stops reading while the hold holds, and the hold's end reads on. */
  private readonly onStdout = (text: string): boolean => {
    this.lines.push(text);
    if (this.paused) return false;
    const readable = this.options.hold.whenReadable();
    if (!readable) return true;
    this.paused = true;
    void readable.then(() => {
      this.paused = false;
      this.process?.stdout.resume();
    });
    return false;
  };

  constructor(private readonly options: StdioProcessOptions) {
    this.told = new Promise((resolve) => (this.tell = resolve));
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  get exitInfo(): ProcessExit | undefined {
    return this.process?.exitInfo;
  }

  async start(receiver: LinkReceiver): Promise<void> {
    this.receiver = receiver;
    const { command, args, cwd, env, graceMs } = this.options;
    try {
      this.process = await GroupProcess.start({ command, args, cwd, env, stdin: "pipe", graceMs, onStdout: this.onStdout });
    } catch (error) {
      throw spawnError(command, cwd, error);
    }
    if (this.process.stdin) this.stdinLines = new TurnWriter(this.process.stdin, REQUESTS_A_WRITE);
    this.process.stderr.setEncoding("utf8").on("data", (chunk: string) => this.options.onStderr(chunk));
    // Calls in flight fail as soon as the child's last output is read, not once its leftovers are stopped.
    void this.process.exited.then(() => this.finish());
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.stdinLines;
    if (!stdin) return Promise.reject(new Error("the child process was not started"));
    if (this.closed || !stdin.stream.writable) return this.failOnClose();
    try {
      if (stdin.write(encodeMessage(message))) return SENT;
    } catch (error) {
      return this.sendFailed(error);
    }
    // Every write waiting on the same drain shares one listener: a child that stops reading gets no pile of them.
    this.drained ??= once(stdin.stream, "drain")
      .then(() => {})
      .finally(() => (this.drained = undefined));
    return this.drained.catch((error: unknown) => this.sendFailed(error));
  }

  /** A pipe the child closed by dying (EPIPE) is its exit, told as an exit is once it is seen. */
  private sendFailed(error: unknown): Promise<void> {
    return isPipeGone(error) ? this.failOnClose() : Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }

  /**
   * Shutdown escalates: close stdin and let the child exit by itself, then SIGTERM the group,
   * then SIGKILL it after the grace period. Resolves once no process of the group is left.
   */
  async close(): Promise<void> {
    this.stdinLines?.flush();
    await this.process?.closeGently(STDIN_CLOSE_GRACE_MS);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.receiver?.closed();
    this.tell();
  }

  /**
   * A message for a process that is gone or going: Node closes its stdin when it sees the exit, and the close
   * is told only once the process's last output has been read. The message fails with the connection's close,
   * once that is told, as every request in flight does: a call sent in that moment is told the same as they are
   * (SERVER_FAILED, how the child ended, its last stderr lines).
   */
  private async failOnClose(): Promise<never> {
    await this.told;
    throw new McpError(ErrorCode.ConnectionClosed, "Connection closed");
  }
}

function spawnError(command: string, cwd: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const advice =
    code === "ENOENT" ? `; check "command", "cwd" (${cwd}), or that it is on PATH` : code === "EACCES" ? "; make it executable (chmod +x)" : "";
  return new Error(`"${command}" ${spawnProblem(error)}${advice}`, { cause: error });
}

/** A write that failed because the reading end is gone: the child died, or its stdin was closed under the write. */
function isPipeGone(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED" || code === "ERR_STREAM_WRITE_AFTER_END";
}
