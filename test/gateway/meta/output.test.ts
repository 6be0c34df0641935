import { describe, expect, it } from "vitest";
import { cutText, cutTextLines } from "../../../src/gateway/meta/output.js";

const ten = Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join("\n");

describe("cutText", () => {
  it("keeps head and tail lines around one line that counts the rest", () => {
    expect(cutText(ten, { head: 1, tail: 2 })).toBe("l1\n[... 7 lines omitted (of 10) ...]\nl9\nl10");
  });

  it("leaves text that already fits alone", () => {
    expect(cutText(ten, { head: 5, tail: 5 })).toBe(ten);
    expect(cutText("one line", { head: 1 })).toBe("one line");
  });

  it("keeps a trailing newline and does not count it as a line", () => {
    expect(cutText(`${ten}\n`, { tail: 1 })).toBe("[... 9 lines omitted (of 10) ...]\nl10\n");
  });

  it("says 'line' for one omitted line", () => {
    expect(cutText("a\nb\nc", { head: 1, tail: 1 })).toBe("a\n[... 1 line omitted (of 3) ...]\nc");
  });
});

describe("cutTextLines", () => {
  const note = "[structuredContent left out: the result was cut with head/tail; call again without them for all of it]";
  const result = {
    content: [
      { type: "text" as const, text: ten },
      { type: "image" as const, data: "AAAA", mimeType: "image/png" },
    ],
    structuredContent: { n: 10 },
    isError: false,
  };

  it("cuts text blocks, keeps other blocks, and leaves out the whole structure beside a cut, saying so in one line", () => {
    expect(cutTextLines(result, { head: 1 })).toEqual({
      isError: false,
      content: [{ type: "text", text: "l1\n[... 9 lines omitted (of 10) ...]" }, result.content[1], { type: "text", text: note }],
    });
    expect(cutTextLines(result, {})).toBe(result);
  });

  it("keeps the structure when nothing was cut", () => {
    expect(cutTextLines(result, { head: 20 })).toEqual(result);
  });
});
