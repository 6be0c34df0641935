// The six meta-tools: their argument schemas (zod, the one source of truth) and the tool lists clients see.
// Calls are checked against the JSON Schema clients see, compiled by ajv like every child tool's: a zod parse
// on every call cost more than the rest of a meta-tool's own work.
import { z } from "zod";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { sayWithMetaTools, type SayLookup } from "../../shared/errors.js";
import { toolInputSchema } from "../../shared/tool-schema.js";

const serverId = z.string().min(1).describe("Child server name, from list_registered_children");

const metaToolArgs = {
  execute_child_tool: z.strictObject({
    server_id: serverId,
    tool_name: z.string().min(1).describe("Tool name, from get_schema"),
    arguments: z.record(z.string(), z.unknown()).default({}).describe("The tool's arguments"),
    head: z.int().min(0).optional().describe("Keep only the first N lines of text output"),
    tail: z.int().min(0).optional().describe("Keep only the last N lines of text output"),
  }),
  get_schema: z.strictObject({
    server_id: serverId,
    tool_name: z.string().min(1).optional().describe("Return this tool only"),
  }),
  list_registered_children: z.strictObject({}),
  get_child_status: z.strictObject({ server_id: serverId }),
  close_child_session: z.strictObject({ server_id: serverId }),
  search_tools: z.strictObject({
    query: z.string().min(1).describe('What you want done, in plain words (e.g. "list open issues")'),
    server_id: serverId.optional().describe("Search this child's tools only"),
    limit: z.int().min(1).max(50).default(10).describe("At most this many hits"),
  }),
};

export type MetaToolName = keyof typeof metaToolArgs;

const descriptions: Record<MetaToolName, string> = {
  execute_child_tool: "Call a tool on a child MCP server. Returns the child's result unchanged. Call get_schema first to learn the tool's arguments.",
  get_schema: "A child server's tools (with input schemas), resources and prompts.",
  list_registered_children: "Names of every child server this gateway fronts.",
  get_child_status: "A child's state, pid, uptime, restarts, last error, stderr tail and queue depth. Does not start it.",
  close_child_session: "Close a child's session and free its process; the next call starts it again.",
  search_tools:
    "Find the tools that do what you describe, across every child, best first: each hit has server_id, tool_name, a one-line description and the input schema, ready for execute_child_tool. Starts no child.",
};

const annotations: Partial<Record<MetaToolName, Tool["annotations"]>> = {
  get_schema: { readOnlyHint: true },
  list_registered_children: { readOnlyHint: true },
  get_child_status: { readOnlyHint: true },
  close_child_session: { destructiveHint: false, idempotentHint: true },
  search_tools: { readOnlyHint: true },
};

/** What a meta-tool's handler receives: its arguments once they fit the input schema. */
export type MetaToolArgs<N extends MetaToolName> = z.input<(typeof metaToolArgs)[N]>;

/** Built once: the list is the same for every client and every config. */
export const META_TOOLS: Tool[] = (Object.keys(metaToolArgs) as MetaToolName[]).map((name) => ({
  name,
  description: descriptions[name],
  inputSchema: toolInputSchema(metaToolArgs[name]),
  ...(annotations[name] && { annotations: annotations[name] }),
}));

const byName = new Map(META_TOOLS.map((tool) => [tool.name, tool]));

/**
 * The meta-tool's own name for `name`, or undefined if it names none: the list's string, which compares with the
 * names written in the code as one pointer, where the request's copy would be compared character by character. By
 * the list's Map: a lookup of a request's string as an object's key would first find or make its one internalized
 * copy, on every call.
 */
export function metaToolName(name: string): MetaToolName | undefined {
  return byName.get(name)?.name as MetaToolName | undefined;
}

/**
 * What `gateway.expose = "search"` lists: progressive discovery, a search and a way to call what it finds. Its
 * words point to search_tools alone, the only way there to learn a child's tools; the arguments are the same.
 */
export const SEARCH_TOOLS: Tool[] = [
  metaTool("search_tools"),
  {
    ...metaTool("execute_child_tool"),
    description: "Call a tool that search_tools found, with arguments that fit the hit's input_schema. Returns the child's result unchanged.",
    inputSchema: toolInputSchema(
      metaToolArgs.execute_child_tool.extend({
        server_id: z.string().min(1).describe("Child server name, from a search_tools hit"),
        tool_name: z.string().min(1).describe("Tool name, from a search_tools hit"),
      }),
    ),
  },
];

/** How hints speak to a caller: with the tools (or commands) it has. */
export interface Wording {
  /** How to learn the children's names, a child's tools or a tool's input schema. */
  lookup: SayLookup;
  /** How to learn the tools of children that have not run. */
  notRun: string;
}

export const META_WORDING: Wording = { lookup: sayWithMetaTools, notRun: "get_schema(server_id) starts one and lists them" };

/** Search mode's words: search_tools, the one tool there that shows a child's tools (none shows its stderr or state). */
export const SEARCH_WORDING: Wording = {
  lookup: ({ server, tool, stderr, retry }) =>
    stderr || retry
      ? ""
      : server === undefined
        ? "search_tools(query) finds tools across every child"
        : tool === undefined
          ? `search_tools(query, server_id: "${server}") finds its tools`
          : `search_tools(query, server_id: "${server}") finds it with its input_schema`,
  // Search mode starts the children nobody knows with gaggle (see createGaggle).
  notRun: "they start with gaggle and are searched once they run, so search again in a moment",
};

/** Proxy mode's words, where no meta-tool is listed: the tool list itself (nothing shows a child's stderr or state). */
export const TOOL_LIST_WORDING: Wording = {
  lookup: ({ tool, stderr, retry }) =>
    stderr || retry ? "" : tool === undefined ? "tools/list lists the tools this gateway offers" : "tools/list gives its input schema",
  notRun: "tools/list lists them once they run",
};

export function metaTool(name: MetaToolName): Tool {
  return byName.get(name)!;
}

/** What the server tells a client at the start, with the tools it lists in each mode, and no other. */
export const INSTRUCTIONS = {
  meta:
    "This gateway fronts several MCP servers (children). search_tools(query) finds the tools that do what you describe; " +
    "list_registered_children names the children, get_schema(server_id) shows a child's tools, " +
    "execute_child_tool(server_id, tool_name, arguments) calls one.",
  search:
    "This gateway fronts several MCP servers (children). search_tools(query) finds the tools that do what you describe, " +
    "each hit with its server_id, tool_name and input_schema; execute_child_tool(server_id, tool_name, arguments) calls one.",
  tools: "This gateway fronts several MCP servers (children); tools/list lists their tools, named CHILD__TOOL unless a child sets its prefix.",
} as const;
