// Shared by the workspace child's tests: a fresh folder as its root, and calls to its tools through a real gaggle.
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { failureOf, startGaggle, textOf, type Failure, type RunningGaggle } from "../../helpers/gaggle.js";

export const ONLY_WORKSPACE = "[virtual.process]\nenabled = false\n[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n";

/** A fresh folder, symlinks resolved, for a workspace root. */
export function scratch(prefix = "gaggle-workspace-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export function workspaceConfig(root: string, settings = ""): string {
  return `${ONLY_WORKSPACE}\n[gateway]\nshutdown_grace_ms = 300\n\n[virtual.workspace]\nenabled = true\nroots = [${JSON.stringify(root)}]\n${settings}\n`;
}

export interface Tools {
  call(tool: string, args: Record<string, unknown>): Promise<CallToolResult>;
  /** The text of a call that must succeed. */
  text(tool: string, args: Record<string, unknown>): Promise<string>;
  /** The failure of a call that must fail. */
  failure(tool: string, args: Record<string, unknown>): Promise<Failure>;
  /** Bash's output without its `[exit status N]` line (output that ends without a newline gets one); throws unless the status is 0. */
  bash(command: string, timeout?: number): Promise<string>;
}

export function toolsOf(client: Client): Tools {
  const call = async (tool: string, args: Record<string, unknown>) =>
    (await client.callTool({
      name: "execute_child_tool",
      arguments: { server_id: "workspace", tool_name: tool, arguments: args },
    })) as CallToolResult;
  const text = async (tool: string, args: Record<string, unknown>) => {
    const result = await call(tool, args);
    if (result.isError) throw new Error(`${tool} failed: ${textOf(result)}`);
    return textOf(result);
  };
  return {
    call,
    text,
    failure: async (tool, args) => failureOf(await call(tool, args)),
    bash: async (command, timeout) => {
      const answer = await text("Bash", { command, ...(timeout !== undefined && { timeout }) });
      const match = /\[exit status (\d+)\]$/.exec(answer);
      if (match?.[1] !== "0") throw new Error(`the command did not exit 0: ${answer}`);
      return answer.slice(0, match.index);
    },
  };
}

export async function workspaceGaggle(
  root: string,
  settings = "",
  options: { env?: Record<string, string>; client?: Client; through?: string[] } = {},
): Promise<RunningGaggle & Tools> {
  const gaggle = await startGaggle(workspaceConfig(root, settings), options);
  return { ...gaggle, ...toolsOf(gaggle.client) };
}

/** Writes `content` to `name` under `root`, its folders made; its path. */
export function fileUnder(root: string, name: string, content: string | Buffer): string {
  const path = join(root, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
  return path;
}
