// `head` / `tail` on execute_child_tool: cuts each text block to its first and last lines, saying what was left out,
// and leaves out the whole structure beside a cut text.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export interface LineWindow {
  head?: number | undefined;
  tail?: number | undefined;
}

/**
 * Text blocks are cut; other blocks, isError and _meta pass through untouched. structuredContent is the same data
 * as the text whole (the spec has a tool send both), so once any text was cut it is left out, and one line says
 * so: the model reads the cut, not the cut and then everything. A result without text passes through whole.
 */
export function cutTextLines(result: CallToolResult, window: LineWindow): CallToolResult {
  if (window.head === undefined && window.tail === undefined) return result;
  // Results arrive as the child wrote them: some children omit `content`, and those are left as they are.
  if (!Array.isArray(result.content) || !result.content.some((block) => block.type === "text")) return result;
  let wasCut = false;
  const blocks = result.content.map((block) => {
    if (block.type !== "text") return block;
    const text = cutText(block.text, window);
    wasCut ||= text !== block.text;
    return { ...block, text };
  });
  if (!wasCut || result.structuredContent === undefined) return { ...result, content: blocks };
  const { structuredContent: _whole, ...rest } = result;
  return { ...rest, content: [...blocks, { type: "text", text: STRUCTURE_NOTE }] };
}

const STRUCTURE_NOTE = "[structuredContent left out: the result was cut with head/tail; call again without them for all of it]";

export function cutText(text: string, { head, tail }: LineWindow): string {
  const endsWithNewline = text.endsWith("\n");
  const lines = (endsWithNewline ? text.slice(0, -1) : text).split("\n");
  const first = head ?? 0;
  const last = tail ?? 0;
  const omitted = lines.length - first - last;
  if (omitted <= 0) return text;
  const kept = [
    ...lines.slice(0, first),
    `[... ${omitted} line${omitted === 1 ? "" : "s"} omitted (of ${lines.length}) ...]`,
    ...(last > 0 ? lines.slice(-last) : []),
  ];
  return kept.join("\n") + (endsWithNewline ? "\n" : "");
}
