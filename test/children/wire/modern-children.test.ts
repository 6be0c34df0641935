// What a 2026-07-28 child sends without being asked (list changes, resource updates) and how it refuses, heard by a 2025
// client through gaggle, over stdio and over Streamable HTTP; and which era gaggle finds an HTTP child speaks.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConformanceFixture, type ConformanceFixture } from "../../helpers/conformance-fixture.js";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { startHttpFixture, type HttpFixture } from "../../helpers/http-fixture.js";
import { envelope, modernCall } from "../../helpers/modern-http.js";
import { listen, type Heard } from "../../helpers/notifications.js";
import { fixture, NO_BUILT_INS } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

let both: ConformanceFixture;
let legacyServer: HttpFixture;

beforeAll(async () => {
  [both, legacyServer] = await Promise.all([startConformanceFixture(), startHttpFixture()]);
});

afterAll(async () => {
  await Promise.all([both?.stop(), legacyServer?.stop()]);
});

const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text;

/** A gaggle over `children` (TOML tables), and a 2025 client of it that records what it hears. */
function gaggleOver(children: () => string[]) {
  const at = { toolListChanges: 0 } as { gaggle: HttpGaggle; client: Client; heard: Heard; toolListChanges: number };
  beforeAll(async () => {
    at.gaggle = await startHttpGaggle(['[gateway]\nexpose = "both"\nlist_wait_ms = 30000\n', NO_BUILT_INS, ...children()].join("\n"));
    at.client = await at.gaggle.connect();
    at.heard = listen(at.client);
    at.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void at.toolListChanges++);
  });
  afterAll(async () => {
    await at.client?.close();
    await at.gaggle?.stop();
  });
  return at;
}

async function status(client: Client, name: string): Promise<{ protocol: string | null; status: string }> {
  await client.callTool({ name: "get_schema", arguments: { server_id: name } });
  return JSON.parse(text(await client.callTool({ name: "get_child_status", arguments: { server_id: name } }))) as never;
}

const CHILDREN: Record<string, () => string> = {
  mstdio: () => `command = ${JSON.stringify(process.execPath)}\nargs = ${JSON.stringify([fixture("conformance-server.mjs"), "--modern-only"])}`,
  mhttp: () => `type = "http"\nurl = ${JSON.stringify(both.url)}`,
};

describe("an HTTP child's era", () => {
  const at = gaggleOver(() => [
    `[mcp_servers.mhttp]\n${CHILDREN.mhttp!()}\n`,
    `[mcp_servers.lhttp]\ntype = "http"\nurl = "${legacyServer.origin}/mcp"\n`,
  ]);

  it("is found with server/discover first: 2026-07-28 for a server of both eras, 2025-11-25 for a 2025 server", async () => {
    expect((await status(at.client, "mhttp")).protocol).toBe("2026-07-28");
    expect((await status(at.client, "lhttp")).protocol).toBe("2025-11-25");
    // The 2025 server was asked only after its refusal of the probe, and serves its session as always.
    expect(text(await at.client.callTool({ name: "lhttp__echo", arguments: { text: "still here" } }))).toBe("still here");
  });
});

describe.each(["mstdio", "mhttp"])("the 2026-07-28 child %s, from a 2025 client's session", (child) => {
  const at = gaggleOver(() => [`[mcp_servers.${child}]\n${CHILDREN[child]!()}\n`]);

  it("its resource updates reach the client that subscribed, until it unsubscribes", async () => {
    await at.client.subscribeResource({ uri: "test://watched-resource" });
    const before = at.heard.updated.length;
    await at.client.callTool({ name: `${child}__test_trigger_resource_update`, arguments: {} });
    await until(
      () => at.heard.updated.slice(before),
      (uris) => uris.includes("test://watched-resource"),
    );

    await at.client.unsubscribeResource({ uri: "test://watched-resource" });
    const after = at.heard.updated.length;
    const changes = at.toolListChanges;
    await at.client.callTool({ name: `${child}__test_trigger_resource_update`, arguments: {} });
    // The list change is announced after the update on the same stream: once it arrives, an update would have too.
    await at.client.callTool({ name: `${child}__test_trigger_tool_change`, arguments: {} });
    await until(
      () => at.toolListChanges,
      (count) => count > changes,
    );
    expect(at.heard.updated.slice(after)).toEqual([]);
  });

  it("a tool list change it announces on its listen stream reaches the client as tools/list_changed", async () => {
    const changes = at.toolListChanges;
    await at.client.callTool({ name: `${child}__test_trigger_tool_change`, arguments: {} });
    await until(
      () => at.toolListChanges,
      (count) => count > changes,
    );
  });

  it("its own error answer to a tool call reaches the client as that JSON-RPC error, and the child stays up", async () => {
    const retry = {
      name: `${child}__test_input_required_result_tampered_state`,
      arguments: {},
      inputResponses: { confirm: { action: "accept", content: { ok: true } } },
      requestState: "forged.state",
      _meta: envelope(),
    };
    const { message } = await modernCall(at.gaggle.port, { method: "tools/call", params: retry });
    expect(message.error).toMatchObject({ code: -32602, message: "requestState integrity check failed" });
    expect(await status(at.client, child)).toMatchObject({ status: "running", protocol: "2026-07-28" });
  });
});

describe.each(["mstdio", "mhttp"])("a call to the 2026-07-28 child %s that its client cancels", (child) => {
  const at = gaggleOver(() => [`[mcp_servers.${child}]\n${CHILDREN[child]!()}\n`]);

  it("is cancelled at the child: notifications/cancelled on stdio, its response stream closed over HTTP", async () => {
    const cancelled = async () =>
      (JSON.parse(text(await at.client.callTool({ name: `${child}__test_cancelled_calls`, arguments: {} }))) as { cancelled: number }).cancelled;
    const before = await cancelled();
    const controller = new AbortController();
    // The child reports progress once the call runs there; only then is it cancelled.
    const call = at.client.callTool({ name: `${child}__test_wait_for_cancel`, arguments: {} }, undefined, {
      signal: controller.signal,
      onprogress: () => controller.abort("the user gave up"),
    });
    await expect(call).rejects.toThrow(/gave up|abort/i);
    await until(cancelled, (count) => count > before);
    expect(await status(at.client, child)).toMatchObject({ status: "running" });
  });
});

describe("a tools/call to a 2026-07-28 child over HTTP", () => {
  const at = gaggleOver(() => [`[mcp_servers.mhttp]\n${CHILDREN.mhttp!()}\n`]);

  it("mirrors the parameters the tool marks with x-mcp-header into Mcp-Param headers (the child refuses the call without)", async () => {
    for (const region of ["us-west1", "Hello, 世界", " padded "]) {
      const result = await at.client.callTool({ name: "mhttp__test_header_param", arguments: { region } });
      expect(result.isError).toBeFalsy();
      expect(text(result)).toBe(`region: ${region}`);
    }
  });
});
