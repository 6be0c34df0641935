// Runs the conformance fixture (fixtures/conformance-server.mjs, both protocol eras) over Streamable HTTP.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fixture } from "./paths.js";

export interface ConformanceFixture {
  /** http://127.0.0.1:PORT/mcp */
  url: string;
  stop(): Promise<void>;
}

/** `args` follow `--http 0` (see fixtures/conformance-server.mjs). */
export async function startConformanceFixture(args: string[] = []): Promise<ConformanceFixture> {
  const child = spawn(process.execPath, [fixture("conformance-server.mjs"), "--http", "0", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the conformance fixture did not start; stderr: ${stderr}`)), 10_000);
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      const match = /listening on (\S+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the conformance fixture exited (code ${code}); stderr: ${stderr}`));
    });
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    },
  };
}
