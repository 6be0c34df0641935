// The path a request reaches is the one the URL parser reads from its target, whether or not it is parsed.
import { describe, expect, it } from "vitest";
import { pathOf } from "../../src/transport/http-server.js";

describe("a request's path", () => {
  it("is its target's pathname as the URL parser reads it, plain targets included", () => {
    const targets = [
      "/mcp",
      "/",
      "/healthz",
      "/members/AbCdEf0123456789_-xyz/mcp",
      "/mcp/",
      "/a//b",
      "//evil.example/mcp",
      "//mcp",
      "/mcp?x=1",
      "/mcp#frag",
      "/%6dcp",
      "/./mcp",
      "/a/../mcp",
      "/.well-known/x",
      "/mcp.",
      "/m cp",
      "/m\\cp",
      "/café",
      "*",
      "mcp",
      "http://other.example/mcp",
      "",
    ];
    for (const target of targets) {
      expect({ target, path: pathOf(target) }).toEqual({ target, path: new URL(target, "http://gaggle").pathname });
    }
    expect(pathOf(undefined)).toBe("/");
  });
});
