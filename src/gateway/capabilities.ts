// What gaggle says of itself to clients of either era: the same capabilities in both. Its instructions depend
// on the tools it lists (see Wording).

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
