// Runs a real gaggle serving Streamable HTTP on a free loopback port, and connects SDK clients to it.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { Client, type ClientOptions } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { writeConfig } from "./gaggle.js";
import { CLI } from "./paths.js";

export interface HttpGaggle {
  process: ChildProcess;
  pid: number;
  url: string;
  port: number;
  /** The config file it runs with. */
  config: string;
  stderr(): string;
  /**
   * A new client session; `headers` go on every request (e.g. Authorization). Resolves once the session's
   * notification stream (its GET) is open, so nothing gaggle sends on it from then on can be missed.
   */
  connect(options?: { headers?: Record<string, string>; client?: ClientOptions; name?: string }): Promise<Client>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

export async function startHttpGaggle(
  configText: string,
  options: { env?: Record<string, string>; listen?: string; args?: string[] } = {},
): Promise<HttpGaggle> {
  const config = writeConfig(configText);
  const child = spawn(process.execPath, [CLI, "--config", config, "--http", options.listen ?? "0", ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const match = /serving MCP at (http:\/\/\S+)/.exec(stderr);
      if (match) resolve(match[1]!);
    };
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`gaggle exited with code ${code} before listening:\n${stderr}`)));
  });
  const clients: Client[] = [];
  return {
    process: child,
    pid: child.pid!,
    url,
    port: Number(new URL(url).port),
    config,
    stderr: () => stderr,
    connect: async ({ headers, client: clientOptions, name } = {}) => {
      const client = new Client({ name: name ?? "gaggle-http-test", version: "0.0.0" }, clientOptions ?? { capabilities: {} });
      // The SDK opens the stream in the background after initialization; the test waits for it here.
      let streamOpened!: () => void;
      const streamOpen = new Promise<void>((resolve) => (streamOpened = resolve));
      const watchingFetch: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if ((init?.method ?? "GET") === "GET" && response.ok) streamOpened();
        return response;
      };
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: headers ?? {} }, fetch: watchingFetch }));
      await Promise.race([
        streamOpen,
        new Promise((_, reject) => setTimeout(() => reject(new Error("the session's notification stream did not open within 10 s")), 10_000).unref()),
      ]);
      clients.push(client);
      return client;
    },
    stop: async () => {
      await Promise.allSettled(clients.map((client) => client.close()));
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        // "close" comes once stderr has been read to its end, so stderr() holds the shutdown's lines.
        await once(child, "close");
      }
    },
  };
}

/** What a client sends for the principal `token` names: its bearer header. */
export const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
