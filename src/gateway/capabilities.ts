// What gaggle says of itself to clients of either era: the same capabilities and instructions in both.

export const INSTRUCTIONS =
  "This gateway fronts several MCP servers (children). search_tools(query) finds the tools that do what you describe; " +
  "list_registered_children names the children, get_schema(server_id) shows a child's tools, " +
  "execute_child_tool(server_id, tool_name, arguments) calls one.";

/**
 * gaggle lists tools (its meta-tools at least), its own resources and its children's, prompts, logs and completions;
 * and, for Claude Code, it is a channel: the end of background work reaches the conversation (see CHANNEL_METHOD).
 */
export const CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {},
  experimental: { "claude/channel": {} },
};

/**
 * Claude Code's channel contract: `content` (a string) is put before the model as an event, with `meta` (string
 * values under identifier keys) as its attributes. A client without channels ignores the notification.
 */
export const CHANNEL_METHOD = "notifications/claude/channel";
