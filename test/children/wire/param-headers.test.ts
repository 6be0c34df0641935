// x-mcp-header (2026-07-28 over HTTP): which annotations are valid, how values become Mcp-Param headers, and which
// tools a child of that era and transport may list.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { headerParamsOf, headerValue, paramHeaders } from "../../../src/children/wire/param-headers.js";
import { visibleTools } from "../../../src/children/tool-filter.js";
import type { Logger } from "../../../src/shared/log.js";

const tool = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}): Tool =>
  ({ name: "t", inputSchema: { type: "object", properties, ...extra } }) as Tool;

describe("headerValue", () => {
  it("is plain for visible ASCII, and base64 in the sentinel for anything a header cannot carry as it is", () => {
    expect(headerValue("us-west1")).toBe("us-west1");
    expect(headerValue("us west 1")).toBe("us west 1");
    expect(headerValue("")).toBe("");
    for (const value of ["Hello, 世界", " padded", "padded ", "line1\nline2", "line1\r\nline2", "\tindented", "=?base64?literal?="]) {
      expect(headerValue(value)).toBe(`=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`);
    }
  });
});

describe("headerParamsOf", () => {
  it("finds annotated string, integer and boolean properties, nested ones through properties only", () => {
    const params = headerParamsOf(
      tool({
        region: { type: "string", "x-mcp-header": "Region" },
        limits: { type: "object", properties: { priority: { type: "integer", "x-mcp-header": "Priority" } } },
        verbose: { type: "boolean", "x-mcp-header": "Verbose" },
        query: { type: "string" },
      }),
    );
    expect(params).toEqual([
      { path: ["region"], name: "Region" },
      { path: ["limits", "priority"], name: "Priority" },
      { path: ["verbose"], name: "Verbose" },
    ]);
  });

  it.each([
    ["an empty name", { a: { type: "string", "x-mcp-header": "" } }, /not a header name token/],
    ["a space in the name", { a: { type: "string", "x-mcp-header": "My Region" } }, /not a header name token/],
    ["a colon in the name", { a: { type: "string", "x-mcp-header": "Region:Primary" } }, /not a header name token/],
    ["a non-ASCII name", { a: { type: "string", "x-mcp-header": "Région" } }, /not a header name token/],
    ["a control character in the name", { a: { type: "string", "x-mcp-header": "Region\t1" } }, /not a header name token/],
    ["a number property", { a: { type: "number", "x-mcp-header": "Score" } }, /not a string, integer or boolean/],
    ["an object property", { a: { type: "object", "x-mcp-header": "Obj" } }, /not a string, integer or boolean/],
    [
      "a name used twice, in other case",
      { a: { type: "string", "x-mcp-header": "MyField" }, b: { type: "string", "x-mcp-header": "myfield" } },
      /used twice/,
    ],
    ["an annotation inside items", { a: { type: "array", items: { type: "string", "x-mcp-header": "Item" } } }, /outside the chain of properties/],
    ["an annotation inside anyOf", { a: { anyOf: [{ type: "string", "x-mcp-header": "Alt" }] } }, /outside the chain of properties/],
  ])("refuses %s", (_what, properties, reason) => {
    expect(headerParamsOf(tool(properties))).toMatch(reason);
  });

  it("refuses an annotation reached only through $ref, and takes a property named x-mcp-header for what it is", () => {
    const viaRef = tool({ a: { $ref: "#/$defs/region" } }, { $defs: { region: { type: "string", "x-mcp-header": "Region" } } });
    expect(headerParamsOf(viaRef)).toMatch(/outside the chain of properties/);
    expect(headerParamsOf(tool({ "x-mcp-header": { type: "string" } }))).toEqual([]);
  });
});

describe("paramHeaders", () => {
  it("encodes each value that is there, and leaves out absent and null ones", () => {
    const params = [
      { path: ["region"], name: "Region" },
      { path: ["limits", "priority"], name: "Priority" },
      { path: ["verbose"], name: "Verbose" },
      { path: ["greeting"], name: "Greeting" },
      { path: ["missing"], name: "Missing" },
    ];
    const args = { region: "us-west1", limits: { priority: 42 }, verbose: null, greeting: "Hello, 世界" };
    expect(paramHeaders(params, args)).toEqual([
      ["mcp-param-Region", "us-west1"],
      ["mcp-param-Priority", "42"],
      ["mcp-param-Greeting", `=?base64?${Buffer.from("Hello, 世界").toString("base64")}?=`],
    ]);
    expect(paramHeaders([{ path: ["flag"], name: "Flag" }], { flag: false })).toEqual([["mcp-param-Flag", "false"]]);
  });
});

describe("visibleTools", () => {
  const warnings: unknown[] = [];
  const log = { warn: (fields: unknown) => void warnings.push(fields) } as unknown as Logger;
  const good = { ...tool({ region: { type: "string", "x-mcp-header": "Region" } }), name: "good" };
  const bad = { ...tool({ region: { type: "string", "x-mcp-header": "My Region" } }), name: "bad" };

  it("leaves out a tool with invalid annotations for a 2026-07-28 child over HTTP, and says why", () => {
    const shown = visibleTools({ name: "headers", tools: { deny: [] }, transport: "http" }, () => ({ modern: true }), log).of([good, bad]);
    expect(shown.tools.map((t) => t.name)).toEqual(["good"]);
    expect(warnings).toEqual([expect.objectContaining({ tool: "bad", reason: expect.stringContaining("My Region") })]);
  });

  it("lists it for a 2025 child, and for a 2026-07-28 child over stdio, where the annotations mean nothing", () => {
    expect(
      visibleTools({ name: "headers", tools: { deny: [] }, transport: "http" }, () => ({ modern: false }), log).of([good, bad]).tools,
    ).toHaveLength(2);
    expect(
      visibleTools({ name: "headers", tools: { deny: [] }, transport: "stdio" }, () => ({ modern: true }), log).of([good, bad]).tools,
    ).toHaveLength(2);
  });
});
