// A child's answer to a forwarded tools/call reaches an HTTP client as the child wrote it, only its id changed, in
// either era: no second parse and serialization, which would respell its numbers and escapes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { envelope, MODERN } from "../helpers/modern-http.js";
import { fixture, fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";

let gaggle: HttpGaggle;

beforeAll(async () => {
  const child = [
    "[mcp_servers.written]",
    `command = ${JSON.stringify(process.execPath)}`,
    `args = [${JSON.stringify(fixture("as-written.mjs"))}, "${MODERN}"]`,
    `protocol = "${MODERN}"`,
  ].join("\n");
  const legacy = fixtureChild("legacy", "as-written.mjs");
  gaggle = await startHttpGaggle(['[gateway]\nexpose = "both"\n', NO_BUILT_INS, child, legacy].join("\n"));
});

afterAll(async () => {
  await gaggle.stop();
});

/** The response's JSON text as it came: the body, or the data of its one SSE event. */
async function rawCall(id: string, name: string, args: Record<string, unknown>, accept: string): Promise<string> {
  const body = { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, _meta: envelope() } };
  const response = await fetch(`http://127.0.0.1:${gaggle.port}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  if (!String(response.headers.get("content-type")).startsWith("text/event-stream")) return text;
  const data = text.split("\n").filter((line) => line.startsWith("data: "));
  expect(data).toHaveLength(1);
  return data[0]!.slice("data: ".length);
}

// The result as fixtures/as-written.mjs writes it: 1.50, an integer beyond 2^53 and an escape survive.
const WRITTEN = '{"content":[{"type":"text","text":"caf\\u00e9"}],"structuredContent":{"n":1.50,"big":12345678901234567890},"resultType":"complete"}';

describe("a 2026-07-28 child's answer, passed to a 2026-07-28 HTTP client", () => {
  it.each(["application/json, text/event-stream", "application/json"])(
    "arrives as the child wrote it, with only the id changed (accept: %s)",
    async (accept) => {
      const line = await rawCall("proxied", "written__as_written", {}, accept);
      expect(line).toBe(`{"result":${WRITTEN},"jsonrpc":"2.0","id":"proxied"}`);
    },
  );

  it("through execute_child_tool too", async () => {
    const line = await rawCall("meta", "execute_child_tool", { server_id: "written", tool_name: "as_written" }, "application/json");
    expect(line).toBe(`{"result":${WRITTEN},"jsonrpc":"2.0","id":"meta"}`);
  });
});

/** POSTs `body` to /mcp in a 2025 session (none yet for initialize); the answer's SSE data, and the session. */
async function sessionPost(body: Record<string, unknown>, session?: string): Promise<{ data: string[]; session: string | undefined }> {
  const response = await fetch(`http://127.0.0.1:${gaggle.port}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(session && { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" }),
    },
    body: JSON.stringify(body),
  });
  expect(response.status).toBeLessThan(300);
  const text = await response.text();
  const data = text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice("data: ".length));
  return { data, session: response.headers.get("mcp-session-id") ?? session };
}

describe("a 2025 child's answer, passed to a client in a 2025 HTTP session", () => {
  it("arrives as the child wrote it, with only the id changed", async () => {
    const clientInfo = { name: "raw", version: "0" };
    const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo };
    const { session } = await sessionPost({ jsonrpc: "2.0", id: 0, method: "initialize", params: init });
    expect(session).toBeDefined();
    await sessionPost({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
    const call = { jsonrpc: "2.0", id: "legacy", method: "tools/call", params: { name: "legacy__as_written", arguments: {} } };
    const { data } = await sessionPost(call, session);
    const written = '{"content":[{"type":"text","text":"caf\\u00e9"}],"structuredContent":{"n":1.50,"big":12345678901234567890}}';
    expect(data).toEqual([`{"result":${written},"jsonrpc":"2.0","id":"legacy"}`]);
  });
});
