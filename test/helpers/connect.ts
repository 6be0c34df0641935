// One way to reach a real gaggle over either client transport, so a test body can run against both.
import { Client, type ClientOptions } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { textOf, writeConfig } from "./gaggle.js";
import { startHttpGaggle } from "./gaggle-http.js";
import { CLI } from "./paths.js";

export type ServingTransport = "stdio" | "http";

export interface Gateway {
  readonly transport: ServingTransport;
  /**
   * A connected client. Over HTTP every client is a new session of one gaggle; over stdio every client
   * has a gaggle process (and children) of its own, since a stdio server serves exactly one client.
   */
  connect(options?: ClientOptions): Promise<Client>;
  /** Everything the gaggle processes wrote to stderr so far. */
  stderr(): string;
  /** Closes every client and stops every gaggle process this gateway started. */
  close(): Promise<void>;
}

export async function openGateway(transport: ServingTransport, configText: string): Promise<Gateway> {
  if (transport === "http") {
    const http = await startHttpGaggle(configText);
    return {
      transport,
      connect: (options) => http.connect({ client: options ?? { capabilities: {} } }),
      stderr: () => http.stderr(),
      close: () => http.stop(),
    };
  }
  const configPath = writeConfig(configText);
  const clients: Client[] = [];
  let stderr = "";
  return {
    transport,
    connect: async (options) => {
      const stdio = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "--config", configPath],
        env: process.env as Record<string, string>,
        stderr: "pipe",
      });
      stdio.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const client = new Client({ name: "gaggle-stdio-test", version: "0.0.0" }, options ?? { capabilities: {} });
      await client.connect(stdio);
      clients.push(client);
      return client;
    },
    stderr: () => stderr,
    // Closing a stdio client ends gaggle's stdin, and gaggle then stops its children and exits.
    close: async () => void (await Promise.allSettled(clients.map((client) => client.close()))),
  };
}

/** Calls a meta-tool and parses its JSON text answer. */
export async function metaJson<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  return JSON.parse(textOf((await client.callTool({ name, arguments: args })) as CallToolResult)) as T;
}
