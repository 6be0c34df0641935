// A gaggle on stdio driven with raw JSON lines, whose stdout the test can stop reading; and its resident memory.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeConfig } from "./gaggle.js";
import { CLI } from "./paths.js";

export class RawStdioGaggle {
  readonly process: ChildProcessWithoutNullStreams;
  /** Every message read from gaggle's stdout so far, in order. */
  readonly messages: Array<Record<string, unknown>> = [];
  private stderrText = "";
  private partial = "";
  private closed = false;
  private waiters: Array<() => void> = [];

  /** The config file it serves, which a test may edit. */
  readonly configPath: string;

  constructor(configText: string) {
    this.configPath = writeConfig(configText);
    this.process = spawn(process.execPath, [CLI, "--config", this.configPath], { stdio: "pipe" });
    this.process.stderr.setEncoding("utf8").on("data", (chunk: string) => (this.stderrText += chunk));
    this.process.stdout.setEncoding("utf8").on("data", (chunk: string) => this.read(chunk));
    // "close" comes once stdout has been read to its end: no answer can come after it.
    this.process.once("close", () => {
      this.closed = true;
      this.wake();
    });
  }

  get pid(): number {
    return this.process.pid!;
  }

  get stderr(): string {
    return this.stderrText;
  }

  send(message: Record<string, unknown>): void {
    this.process.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  }

  /** Initializes the session as a 2025 client would. */
  async initialize(): Promise<void> {
    const params = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-stdio", version: "0" } };
    this.send({ id: "init", method: "initialize", params });
    await this.answerTo("init");
    this.send({ method: "notifications/initialized" });
  }

  /** Stops reading gaggle's stdout: what it writes fills the pipe, then waits in gaggle. */
  stopReading(): void {
    this.process.stdout.pause();
  }

  resumeReading(): void {
    this.process.stdout.resume();
  }

  /** Resolves with the answer to request `id` once it has been read; rejects if gaggle exits first. */
  async answerTo(id: string): Promise<Record<string, unknown>> {
    for (;;) {
      const answer = this.messages.find((message) => message.id === id && !("method" in message));
      if (answer) return answer;
      if (this.closed) {
        throw new Error(`gaggle exited (${this.process.exitCode ?? this.process.signalCode}) before answering ${id}:\n${this.stderrText}`);
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /**
   * Ends gaggle's stdin and waits for it to exit; what it still writes is read and thrown away. One that has not
   * exited within 10 s (a gaggle without bounds, with a gigabyte still to write) is killed.
   */
  async close(): Promise<void> {
    this.process.stdout.removeAllListeners("data");
    this.process.stdout.resume();
    this.process.stdin.end();
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const kill = setTimeout(() => this.process.kill("SIGKILL"), 10_000);
    await new Promise((resolve) => this.process.once("exit", resolve));
    clearTimeout(kill);
  }

  private read(chunk: string): void {
    // A long answer comes in many chunks: only the one that ends it is split.
    if (!chunk.includes("\n")) return void (this.partial += chunk);
    const lines = (this.partial + chunk).split("\n");
    this.partial = lines.pop()!;
    for (const line of lines) if (line !== "") this.messages.push(JSON.parse(line) as Record<string, unknown>);
    this.wake();
  }

  private wake(): void {
    const ready = this.waiters;
    this.waiters = [];
    for (const wake of ready) wake();
  }
}

/** A process's resident memory in KiB (VmRSS in /proc/PID/status). */
export function residentKib(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]);
}

/**
 * Samples `pid`'s resident memory every 50 ms until stopped, or until the process is gone (a test that failed
 * need not stop it); `stop` gives the largest sample, in KiB.
 */
export function watchResident(pid: number): { stop(): number } {
  let peakKib = residentKib(pid);
  const sample = () => {
    try {
      peakKib = Math.max(peakKib, residentKib(pid));
    } catch {
      clearInterval(timer);
    }
  };
  const timer = setInterval(sample, 50).unref();
  return {
    stop() {
      sample();
      clearInterval(timer);
      return peakKib;
    },
  };
}
