import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/virtual/virtual-child.js";

const run = async () => ({ content: [] });

describe("defineTool", () => {
  it("gives a built-in tool the input schema of its zod object, closed to properties it does not name", () => {
    const tool = defineTool({ name: "probe", description: "d", input: z.strictObject({ n: z.int().min(1).describe("a count") }), run });
    expect(tool.definition).toEqual({
      name: "probe",
      description: "d",
      annotations: {},
      inputSchema: {
        type: "object",
        properties: { n: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "a count" } },
        required: ["n"],
        additionalProperties: false,
      },
    });
  });

  it("refuses an input that would let unknown properties through", () => {
    expect(() => defineTool({ name: "loose", description: "d", input: z.object({ n: z.string() }), run })).toThrow(
      "the input of the built-in tool loose must be a z.strictObject",
    );
  });
});
