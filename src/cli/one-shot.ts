// `gaggle list | schema | call`: one request through the same router and meta-tools, printed for a shell.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { GaggleConfig } from "../config/index.js";
import { sayToPerson } from "../shared/errors.js";
import { isObject } from "../shared/json.js";
import { MetaHandlers } from "../gateway/meta/meta-handlers.js";
import { createGaggleWithListener } from "../transport/members-listener.js";
import type { MetaToolName, Wording } from "../gateway/meta/meta-tools.js";

export type OneShotCommand = "list" | "schema" | "call";

export class UsageError extends Error {}

/** A shell user's words: the commands that show what the meta-tools would. */
const CLI_WORDING: Wording = {
  lookup: sayToPerson,
  notRun: "`gaggle schema SERVER` starts one and lists its tools",
};

/** Maps the command line to a meta-tool call. */
function toMetaCall(command: OneShotCommand, operands: string[]): Array<[MetaToolName, Record<string, unknown>]> {
  const [server, tool, json] = operands;
  switch (command) {
    case "list":
      return [["list_registered_children", {}]];
    case "schema":
      if (!server) throw new UsageError("usage: gaggle schema SERVER [TOOL]");
      return [["get_schema", { server_id: server, ...(tool && { tool_name: tool }) }]];
    case "call":
      if (!server || !tool) throw new UsageError("usage: gaggle call SERVER TOOL [JSON_ARGS]");
      return [["execute_child_tool", { server_id: server, tool_name: tool, arguments: parseJsonArgs(json) }]];
  }
}

const JSON_ARGS_EXAMPLE = `e.g. gaggle call SERVER TOOL '{"text": "hi"}'`;

function parseJsonArgs(json: string | undefined): unknown {
  if (json === undefined) return {};
  let args: unknown;
  try {
    args = JSON.parse(json);
  } catch (error) {
    throw new UsageError(`JSON_ARGS is not valid JSON: ${(error as Error).message}\n  ${JSON_ARGS_EXAMPLE}`);
  }
  if (!isObject(args)) {
    throw new UsageError(`JSON_ARGS must be a JSON object of the tool's arguments\n  ${JSON_ARGS_EXAMPLE}`);
  }
  return args;
}

/** Prints each result to stdout; resolves with the exit code (1 when any result is an error). */
export async function runOneShot(command: OneShotCommand, operands: string[], config: GaggleConfig): Promise<number> {
  const { gaggle, members } = createGaggleWithListener(config);
  const handlers = new MetaHandlers(gaggle.router, { wording: () => CLI_WORDING });
  let failed = false;
  try {
    for (const [tool, args] of toMetaCall(command, operands)) {
      const result = await handlers.call(tool, args, { endsWithCall: true });
      failed ||= result.isError === true;
      process.stdout.write(render(result));
    }
  } finally {
    await gaggle.close();
    await members.close();
  }
  return failed ? 1 : 0;
}

/**
 * Text blocks print as they are (JSON text pretty-printed); other blocks print as JSON. structuredContent is
 * printed only when no text block carries the result: a tool that returns it also sends it as text.
 */
function render(result: CallToolResult): string {
  // Results arrive as the child wrote them; some children leave out `content`.
  const blocks = result.content ?? [];
  const parts = blocks.map((block) => (block.type === "text" ? prettyIfJson(block.text) : JSON.stringify(block)));
  if (result.structuredContent && !blocks.some((block) => block.type === "text")) {
    parts.push(JSON.stringify({ structuredContent: result.structuredContent }, null, 2));
  }
  return parts.join("\n") + "\n";
}

function prettyIfJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
