// `head` / `tail` on execute_child_tool: cuts each text block to its first and last lines, saying what was left out.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export interface LineWindow {
  head?: number | undefined;
  tail?: number | undefined;
}

/**
 * Everything but text blocks (and structuredContent, isError, _meta) passes through untouched, and so does
 * a result without a `content` array: results arrive as the child wrote them, and some children omit it.
 */
export function cutTextLines(result: CallToolResult, window: LineWindow): CallToolResult {
  if ((window.head === undefined && window.tail === undefined) || !Array.isArray(result.content)) return result;
  return {
    ...result,
    content: result.content.map((block) => (block.type === "text" ? { ...block, text: cutText(block.text, window) } : block)),
  };
}

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
