// Fuzzed JSON-RPC over Streamable HTTP, the bounded version of `npm run chaos`'s attack: every POST gets a whole
// answer, gaggle lives through them all, and a new client is served after.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { fuzz, seeded } from "../helpers/chaos.js";
import { textOf } from "../helpers/gaggle.js";
import { startHttpGaggle } from "../helpers/gaggle-http.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { carrying, killCarrying, waitGone } from "../helpers/processes.js";
import { INITIALIZE, MCP_POST_HEADERS, postMcp, rawRequest } from "../helpers/raw-http.js";

const REQUESTS = 200;
const mark = `GAGGLE_TEST_MARK=http-fuzz-${randomUUID()}`;
afterAll(() => killCarrying(mark));

describe("fuzzed JSON-RPC over HTTP", () => {
  it("gives each of 200 generated POSTs, some with bad headers, a whole answer and no server error, then serves a new client", async () => {
    const child = fixtureChild(fuzz.FUZZ_CHILD, "echo.mjs", "concurrency = 4\ntimeout_ms = 3000\nmax_timeout_ms = 3000");
    const [name, value] = mark.split("=") as [string, string];
    const gaggle = await startHttpGaggle(`[gateway]\nlog_level = "warn"\nshutdown_grace_ms = 500\n${NO_BUILT_INS}\n${child}`, {
      env: { [name]: value },
    });
    const opened = await postMcp(gaggle.port, INITIALIZE);
    const session = { ...MCP_POST_HEADERS, "mcp-protocol-version": "2025-11-25", "mcp-session-id": String(opened.headers["mcp-session-id"]) };
    await postMcp(gaggle.port, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session);

    const random = seeded(12);
    const lines = fuzz.fuzzLines(random, { idPrefix: "h" });
    const headerVariants: Array<Record<string, string>> = [
      session,
      session,
      session,
      { ...session, accept: "application/json" },
      { ...session, "content-type": "text/plain" },
      { ...session, "mcp-session-id": randomUUID() },
      { ...MCP_POST_HEADERS, "mcp-protocol-version": "2026-07-28" },
    ];
    const statuses = new Set<number>();
    for (let i = 0; i < REQUESTS; i += 4) {
      // Four at a time; rawRequest rejects when no whole answer comes within its limit.
      const batch = Array.from({ length: 4 }, (_, k) => {
        const { data } = lines.next(i + k);
        const body = typeof data === "string" ? data : data.toString("utf8");
        return rawRequest(gaggle.port, { method: "POST", headers: random.pick(headerVariants), body }, 15_000);
      });
      for (const { status } of await Promise.all(batch)) statuses.add(status);
    }
    expect([...statuses].every((status) => status >= 200 && status < 500)).toBe(true);

    expect(gaggle.process.exitCode).toBeNull();
    expect((await rawRequest(gaggle.port, { path: "/healthz" })).status).toBe(200);
    const client = await gaggle.connect();
    const result = await client.callTool({
      name: "execute_child_tool",
      arguments: { server_id: fuzz.FUZZ_CHILD, tool_name: "echo", arguments: { text: "still here" } },
    });
    expect(textOf(result as Parameters<typeof textOf>[0])).toBe("still here");
    await gaggle.stop();
    expect(gaggle.process.exitCode).toBe(0);
    expect(await waitGone(carrying(mark))).toEqual([]);
  });
});
