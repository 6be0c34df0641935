// A request the client cancels over Streamable HTTP gets no answer, and its response stream is closed rather than
// left open: here a proxy-mode tools/list still waiting for a child that takes long to start.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";

let gaggle: HttpGaggle;

beforeAll(async () => {
  const config = [
    // The list waits for the child as long as it takes: only the cancellation can end it.
    '[gateway]\nexpose = "tools"\nlist_wait_ms = 600000\n',
    NO_BUILT_INS,
    fixtureChild("slow", "slow.mjs", 'env = { SLOW_START_MS = "60000" }'),
  ].join("\n");
  gaggle = await startHttpGaggle(config);
});
afterAll(() => gaggle?.stop());

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("a cancelled request over Streamable HTTP", () => {
  it("is not answered, and its response stream ends", async () => {
    const initialize = await fetch(gaggle.url, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
      }),
    });
    const session = { ...HEADERS, "mcp-session-id": initialize.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-11-25" };
    await initialize.text();
    const post = (message: Record<string, unknown>) => fetch(gaggle.url, { method: "POST", headers: session, body: JSON.stringify(message) });
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();

    const list = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(list.status).toBe(200);
    const cancel = await post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "the client gave up" } });
    expect(cancel.status).toBe(202);
    // Without the close this would wait for the child (a minute), then for an answer that never comes.
    expect(await list.text()).not.toContain('"id":2');
  });
});
