import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { checkArguments } from "../../src/children/arg-validator.js";

/** A fresh tool object each time, as a refreshed tool list (or a second child) gives. */
const identified = (): Tool => ({
  name: "identified",
  inputSchema: {
    $id: "https://fixtures.gaggle.test/identified-args",
    type: "object",
    properties: { n: { type: "integer" } },
    required: ["n"],
    additionalProperties: false,
  },
});

describe("checkArguments", () => {
  it("checks every tool whose schema carries the same $id, not only the first compiled", () => {
    const first = identified();
    const second = identified();
    expect(checkArguments(first, { n: "one" })).toBe("arguments.n: must be integer");
    expect(checkArguments(second, { n: "one" })).toBe("arguments.n: must be integer");
    expect(checkArguments(second, {})).toBe('arguments: missing required property "n"');
    expect(checkArguments(second, { n: 1 })).toBeUndefined();
  });

  it("resolves a schema's references to its own $id", () => {
    const selfReferring: Tool = {
      name: "self",
      inputSchema: {
        $id: "https://fixtures.gaggle.test/self",
        type: "object",
        $defs: { count: { type: "integer" } },
        properties: { n: { $ref: "https://fixtures.gaggle.test/self#/$defs/count" } },
      },
    };
    expect(checkArguments(selfReferring, { n: "x" })).toBe("arguments.n: must be integer");
    expect(checkArguments(selfReferring, { n: 2 })).toBeUndefined();
  });
});
