import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, startGaggle, textOf, type RunningGaggle } from "../helpers/gaggle.js";
import { fixtureChild } from "../helpers/paths.js";

// The raw fixture answers without the SDK, with what an SDK server would strip or refuse.
const EXPECTED = {
  content: [
    { type: "text", text: "plain", "x-extra": { kept: true } },
    { type: "x-future-block", payload: [1, 2, 3] },
  ],
  "x-result-extra": "kept too",
};

let gaggle: RunningGaggle;

beforeAll(async () => {
  gaggle = await startGaggle(
    `[gateway]\nexpose = "both"\nlist_wait_ms = 30000\n\n${fixtureChild("raw", "raw-server.mjs")}\n${fixtureChild("raw_twin", "raw-server.mjs")}`,
  );
});
afterAll(async () => {
  await gaggle.close();
});

/** The result as it came over the wire, before any client-side schema could reshape it. */
async function rawCall(name: string, args: Record<string, unknown>): Promise<unknown> {
  const { z } = await import("zod");
  return gaggle.client.request({ method: "tools/call", params: { name, arguments: args } }, z.looseObject({}));
}

describe("tool results pass through exactly as the child wrote them", () => {
  it("through execute_child_tool: extra fields and unknown block types survive", async () => {
    expect(await rawCall("execute_child_tool", { server_id: "raw", tool_name: "odd_blocks" })).toEqual(EXPECTED);
  });

  it("through the proxied tool name", async () => {
    expect(await rawCall("raw__odd_blocks", {})).toEqual(EXPECTED);
  });

  it("a result without a content array, even when head/tail are asked for", async () => {
    const args = { server_id: "raw", tool_name: "no_content", head: 1, tail: 1 };
    expect(await rawCall("execute_child_tool", args)).toEqual({ structuredContent: { n: 1 } });
  });
});

describe("arguments are checked against every child's schema", () => {
  it("refuses bad arguments at two children whose tool schemas carry the same $id, before either child sees them", async () => {
    for (const server of ["raw", "raw_twin"]) {
      const bad = failureOf(await gaggle.meta("execute_child_tool", { server_id: server, tool_name: "identified", arguments: { n: "one" } }));
      expect(bad).toMatchObject({
        code: "INVALID_ARGS",
        error: `invalid arguments for ${server}.identified: arguments.n: must be integer, got string "one"`,
      });
      const status = await gaggle.metaJson<{ stderr: string[] }>("get_child_status", { server_id: server });
      expect(status.stderr).not.toContain("call identified");
      expect(textOf(await gaggle.meta("execute_child_tool", { server_id: server, tool_name: "identified", arguments: { n: 7 } }))).toBe("n = 7");
    }
  });

  it("refuses every call of a tool whose schema does not compile, naming the schema's error, and the child never sees it", async () => {
    const refused = failureOf(await gaggle.meta("execute_child_tool", { server_id: "raw", tool_name: "unreadable_schema", arguments: { n: 1 } }));
    expect(refused.code).toBe("INVALID_ARGS");
    expect(refused.error).toMatch(
      /^invalid arguments for raw\.unreadable_schema: the tool's input schema does not compile, so no arguments can be checked against it: schema is invalid: .*properties\/n\/type/,
    );
    const proxied = failureOf((await gaggle.client.callTool({ name: "raw__unreadable_schema", arguments: {} })) as CallToolResult);
    expect(proxied).toMatchObject({ code: "INVALID_ARGS", error: refused.error });
    const status = await gaggle.metaJson<{ stderr: string[] }>("get_child_status", { server_id: "raw" });
    expect(status.stderr).not.toContain("call unreadable_schema");
  });
});
