// Runs a fixture server that prints "listening PORT" on stdout once ready, and keeps what it logs on stderr.
import { spawn, type ChildProcess } from "node:child_process";
import { fixture } from "./paths.js";

export interface ListeningFixture {
  process: ChildProcess;
  port: number;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  kill(): void;
}

export async function startListeningFixture(script: string, args: string[] = []): Promise<ListeningFixture> {
  const child = spawn(process.execPath, [fixture(script), ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(chunk.toString("utf8"));
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`${script} exited (code ${code}) before listening: ${stderr}`)));
  });
  return { process: child, port, stderr: () => stderr, kill: () => void child.kill("SIGKILL") };
}
