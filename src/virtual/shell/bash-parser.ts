// bash's grammar (tree-sitter-bash, WebAssembly) loaded once, a command line parsed within bounds, and a word's
// value as the shell passes it on when nothing in it is expanded.
import { createRequire } from "node:module";
import type * as TreeSitter from "web-tree-sitter";
import type { Node, Parser } from "web-tree-sitter";

/** Longer input is refused rather than read: nobody types a command line this long, and a policy reads all of it. */
export const MAX_COMMAND_CHARS = 100_000;

/** `read` applied to the parsed `source`, or why it could not be parsed; the tree is freed after. */
export async function withTree<T>(source: string, read: (root: Node) => T): Promise<T | { unverifiable: string }> {
  if (source.length > MAX_COMMAND_CHARS) return { unverifiable: `a command line over ${MAX_COMMAND_CHARS} characters` };
  const parser = await bashParser();
  const tree = parser.parse(source);
  if (!tree) return { unverifiable: "a command line the shell grammar could not read" };
  try {
    return read(tree.rootNode);
  } finally {
    tree.delete();
  }
}

let loading: Promise<Parser> | undefined;

/**
 * Loaded on first use: the grammar is WebAssembly, and most configurations never check a command. Required (its
 * CommonJS build), never import()ed: the built gaggle runs as a script from V8's code cache (src/cli/code-cache.ts),
 * and a script that Node 20 hands back from that cache has lost its import() callback, so import() throws
 * "A dynamic import callback was not specified".
 */
export function bashParser(): Promise<Parser> {
  return (loading ??= (async () => {
    // Required, not imported: the bundle runs from V8's code cache, where import() has no loader (see bundle.mjs).
    const load = createRequire(import.meta.url);
    const { Parser, Language } = load("web-tree-sitter") as typeof TreeSitter;
    await Parser.init();
    const bash = await Language.load(load.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
    return new Parser().setLanguage(bash);
  })());
}

/**
 * The word as the shell passes it on, when nothing in it is expanded at run time: quotes and backslashes
 * removed. Undefined for a word with an expansion, a glob, or a leading `~`.
 */
export function literal(node: Node): string | undefined {
  const parts = node.type === "command_name" || node.type === "concatenation" ? node.namedChildren : [node];
  let text = "";
  for (const part of parts) {
    if (!part) continue;
    if (part.type === "concatenation" || part.type === "command_name") {
      const inner = literal(part);
      if (inner === undefined) return undefined;
      text += inner;
    } else if (part.type === "raw_string") text += part.text.slice(1, -1);
    else if (part.type === "string") {
      if (part.namedChildren.some((child) => child?.type !== "string_content")) return undefined;
      text += part.text.slice(1, -1).replace(/\\([$`"\\\n])/g, "$1");
    } else if (part.type === "word" || part.type === "number") {
      if (/^~|(?<!\\)[*?[]|(?<!\\)[{$`]/.test(part.text)) return undefined;
      text += part.text.replace(/\\(.)/gs, "$1");
    } else return undefined;
  }
  return text;
}
