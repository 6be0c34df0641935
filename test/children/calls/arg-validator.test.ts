import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { checkArguments } from "../../../src/children/calls/arg-validator.js";

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
    expect(checkArguments(first, { n: "one" })).toBe('arguments.n: must be integer, got string "one"');
    expect(checkArguments(second, { n: "one" })).toBe('arguments.n: must be integer, got string "one"');
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
    expect(checkArguments(selfReferring, { n: "x" })).toBe('arguments.n: must be integer, got string "x"');
    expect(checkArguments(selfReferring, { n: 2 })).toBeUndefined();
  });

  it("says what type came when a value is of the wrong type", () => {
    const typed: Tool = {
      name: "typed",
      inputSchema: {
        type: "object",
        properties: {
          s: { type: "string" },
          n: { type: "number" },
          o: { type: "object", properties: { "a/b": { type: ["string", "null"] } } },
          i: { type: "integer" },
        },
      },
    };
    expect(checkArguments(typed, { s: 5 })).toBe("arguments.s: must be string, got number 5");
    expect(checkArguments(typed, { n: "5" })).toBe('arguments.n: must be number, got string "5"');
    expect(checkArguments(typed, { o: [1] })).toBe("arguments.o: must be object, got an array");
    expect(checkArguments(typed, { o: { "a/b": true } })).toBe("arguments.o.a~1b: must be string or null, got boolean true");
    expect(checkArguments(typed, { i: 1.5 })).toBe("arguments.i: must be integer, got number 1.5");
    expect(checkArguments(typed, { s: null })).toBe("arguments.s: must be string, got null");
    expect(checkArguments(typed, { s: { x: 1 } })).toBe("arguments.s: must be string, got an object");
    expect(checkArguments(typed, { n: "x".repeat(100) })).toBe(`arguments.n: must be number, got string "${"x".repeat(35)}..."`);
    expect(checkArguments(typed, "text")).toBe('arguments: must be object, got string "text"');
  });

  it("refuses every call of a tool whose schema does not compile, naming the schema's error", () => {
    const unreadable: Tool = { name: "unreadable", inputSchema: { type: "object", properties: { n: { type: "nonsense" } } } };
    const refusal = checkArguments(unreadable, { n: 1 });
    expect(refusal).toMatch(/^the tool's input schema does not compile, so no arguments can be checked against it: schema is invalid: /);
    expect(refusal).toContain("data/properties/n/type must be equal to one of the allowed values");
    // Arguments that would fit any reading of it are refused all the same: nothing was checked.
    expect(checkArguments(unreadable, {})).toBe(refusal);
  });
});
