// JSONC read as JSON of the same length: comments and trailing commas become spaces, nothing else moves.
import { describe, expect, it } from "vitest";
import { jsoncAsJson } from "../../src/shared/json-text.js";

describe("jsoncAsJson", () => {
  it("blanks comments and trailing commas, keeping each line break and every offset", () => {
    const text = '{\r\n  // a\r\n  "a": [1, 2,], /* b\n  c */ "b": {"c": 3 , // d\n },\n}';
    const { json, unclosedCommentAt } = jsoncAsJson(text);
    expect(unclosedCommentAt).toBeUndefined();
    expect(json).toHaveLength(text.length);
    expect(json.split(/\r?\n/).length).toBe(text.split(/\r?\n/).length);
    expect(JSON.parse(json)).toEqual({ a: [1, 2], b: { c: 3 } });
  });

  it("leaves strings as they are, escaped quotes and all", () => {
    const text = '{"a": "x\\" // not a comment, ]", "b": "/* nor this */",}';
    expect(JSON.parse(jsoncAsJson(text).json)).toEqual({ a: 'x" // not a comment, ]', b: "/* nor this */" });
  });

  it("leaves a comma after nothing for the parser to refuse", () => {
    for (const text of ["[,]", '{"a": 1,,}', "{,}"]) expect(jsoncAsJson(text).json).toBe(text);
  });

  it("names where a block comment that never closes opens", () => {
    expect(jsoncAsJson('{"a": 1 /* open\n}').unclosedCommentAt).toBe(8);
  });
});
