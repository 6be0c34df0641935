// Runs a real gaggle process on a temporary config and talks to it through the SDK client over stdio.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CLI } from "./paths.js";

export function writeConfig(text: string, fileName = "children_config.toml"): string {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-test-"));
  const path = join(dir, fileName);
  writeFileSync(path, text);
  return path;
}

export interface RunningGaggle {
  client: Client;
  pid: number;
  /** The config file it was started with. */
  configPath: string;
  /** Everything gaggle wrote to stderr so far. */
  stderr(): string;
  /** Calls a meta-tool and returns the raw result. */
  meta(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Calls a meta-tool and parses its JSON text answer. */
  metaJson<T = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

/** `client`: a client made by the test (with capabilities and handlers of its own), connected here. */
export async function startGaggle(
  configText: string,
  options: { env?: Record<string, string>; args?: string[]; client?: Client; through?: string[] } = {},
): Promise<RunningGaggle> {
  const configPath = writeConfig(configText);
  // `through`: a command gaggle runs under (strace, say), with its arguments.
  const [command, ...before] = [...(options.through ?? []), process.execPath];
  const transport = new StdioClientTransport({
    command: command!,
    args: [...before, CLI, "--config", configPath, ...(options.args ?? [])],
    env: { ...(process.env as Record<string, string>), ...options.env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const client = options.client ?? new Client({ name: "gaggle-test", version: "0.0.0" }, { capabilities: {} });
  await client.connect(transport);
  const pid = transport.pid!;
  const meta = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    client,
    pid,
    configPath,
    stderr: () => stderr,
    meta,
    metaJson: async <T>(name: string, args: Record<string, unknown> = {}) => JSON.parse(textOf(await meta(name, args))) as T,
    close: () => client.close(),
  };
}

export function textOf(result: CallToolResult): string {
  const block = result.content[0];
  if (block?.type !== "text") throw new Error(`expected a text block, got ${JSON.stringify(result.content)}`);
  return block.text;
}

/** What a failed call answers: an isError result whose text is this JSON. */
export interface Failure {
  status: string;
  code: string;
  error: string;
  hint?: string;
}

/** The body of a failed call; throws if the call did not fail. */
export function failureOf(result: CallToolResult): Failure {
  if (!result.isError) throw new Error(`expected a failure, got ${JSON.stringify(result.content)}`);
  return JSON.parse(textOf(result)) as Failure;
}

/** Reads a resource that holds JSON text and parses it. */
export async function readJsonResource<T = Record<string, unknown>>(client: Client, uri: string): Promise<T> {
  const { contents } = await client.readResource({ uri });
  const first = contents[0];
  if (!first || !("text" in first)) throw new Error(`expected text contents for ${uri}, got ${JSON.stringify(contents)}`);
  return JSON.parse(first.text) as T;
}
