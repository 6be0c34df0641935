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

/** What a client is told while the config file does not load: the errors, and that fixing the file applies it. */
export function configErrorText(problems: string[]): string {
  return `gaggle's config file does not load, so gaggle serves the last config that did (none at start); fix the file and it is applied without a reconnect:\n${problems.join("\n")}`;
}

/** The instructions a client of either era is given: why the config does not load, when it does not, first. */
export function instructionsWith(instructions: string, problems: string[]): string {
  return problems.length === 0 ? instructions : `${configErrorText(problems)}\n\n${instructions}`;
}
