// What gaggle says of itself to clients of either era: the same capabilities in both. Its instructions depend
// on the tools it lists (see Wording).

/** gaggle lists tools (its meta-tools at least), its own resources and its children's, prompts, logs and completions. */
export const CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {},
};
