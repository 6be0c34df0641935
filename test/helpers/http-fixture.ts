// Runs fixtures/http-server.mjs (the echo server over Streamable HTTP and SSE) and learns its port.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fixture } from "./paths.js";
import { waitGone } from "./processes.js";

export interface HttpFixture {
  port: number;
  pid: number;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** Everything the server wrote to stderr so far (it logs each session, each tools/call and each 401). */
  stderr(): string;
  /** SIGTERM, then SIGKILL if it lingers. */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crash; resolves once it is gone. */
  kill(): Promise<void>;
}

/**
 * Starts the server on `options.port` (default: a free one); `requireHeader` is `NAME=VALUE`, refused with 401
 * when a request lacks it; `options.args` go to the server as they are (e.g. `--no-get-stream`).
 */
export async function startHttpFixture(requireHeader?: string, options: { port?: number; args?: string[] } = {}): Promise<HttpFixture> {
  const args = [
    fixture("http-server.mjs"),
    String(options.port ?? 0),
    ...(requireHeader ? ["--require-header", requireHeader] : []),
    ...(options.args ?? []),
  ];
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const listening = await new Promise<number>((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => reject(new Error(`http fixture did not print its port; stderr: ${stderr}`)), 10_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const match = /listening (\d+)\n/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`http fixture exited (code ${code}) before listening; stderr: ${stderr}`));
    });
  });
  const pid = child.pid!;
  return {
    port: listening,
    pid,
    origin: `http://127.0.0.1:${listening}`,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await Promise.race([exited, waitGone([pid], 5000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    },
  };
}
