// The log's `err` field: a failure accounted for (GaggleError, a peer's McpError) as one line without a stack, a fault of gaggle's with it.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { GaggleError } from "../../src/shared/errors.js";
import { errSerializer, withStack } from "../../src/shared/log-errors.js";

const failure = () =>
  new GaggleError("SERVER_FAILED", "ghost failed to start: not found", { hint: "check the command", cause: new Error("spawn ENOENT") });

describe("errSerializer", () => {
  it("writes a GaggleError as its type, message, code and hint: no stack, no causes", () => {
    expect(errSerializer(false)(failure())).toEqual({
      type: "GaggleError",
      message: "ghost failed to start: not found",
      code: "SERVER_FAILED",
      hint: "check the command",
    });
  });

  it("writes a peer's McpError without a stack", () => {
    expect(errSerializer(false)(new McpError(ErrorCode.InvalidParams, "bad level"))).not.toHaveProperty("stack");
  });

  it("keeps the stack of any other error, and of every error at debug and trace", () => {
    expect(errSerializer(false)(new TypeError("x is undefined"))).toMatchObject({ type: "TypeError", stack: expect.stringContaining("    at ") });
    expect(errSerializer(true)(failure())).toMatchObject({ type: "GaggleError", stack: expect.stringContaining("    at ") });
  });

  it("keeps the stack of an error written out by withStack, a GaggleError included", () => {
    expect(errSerializer(false)(withStack(failure()))).toMatchObject({ type: "GaggleError", stack: expect.stringContaining("    at ") });
  });
});
