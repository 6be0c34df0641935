// MCP 2026-07-28 over Streamable HTTP: stateless requests beside the 2025 sessions on the same /mcp, checked on the wire.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { envelope, MODERN, modernCall, modernRequest } from "../helpers/modern-http.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { json, type Status } from "./admin/helpers.js";

let gaggle: HttpGaggle;

beforeAll(async () => {
  gaggle = await startHttpGaggle(
    [
      '[gateway]\nexpose = "both"\nlist_wait_ms = 30000\n',
      NO_BUILT_INS,
      fixtureChild("echo", "echo.mjs"),
      fixtureChild("protocol", "protocol.mjs"),
    ].join("\n"),
  );
});

afterAll(async () => {
  await gaggle.stop();
});

const call = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  modernCall(gaggle.port, { method: "tools/call", params: { name, arguments: args, ...(meta && { _meta: meta }) } });

describe("server/discover", () => {
  it("says which versions gaggle speaks per request, its capabilities and itself, as a cacheable complete result", async () => {
    const { status, message } = await modernCall(gaggle.port, { method: "server/discover" });
    expect(status).toBe(200);
    expect(message).toMatchObject({
      id: 1,
      result: {
        supportedVersions: [MODERN],
        capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, prompts: {}, completions: {} },
        resultType: "complete",
        ttlMs: 0,
        cacheScope: "private",
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "gaggle" } },
      },
    });
  });
});

describe("a request the server will not take is refused with its id, the era's code and HTTP status", () => {
  it("a missing envelope or envelope field is -32602 (400); clientInfo may be left out", async () => {
    const noMeta = await modernCall(gaggle.port, { id: 7, method: "tools/list", params: { _meta: {} } });
    expect(noMeta).toMatchObject({ status: 400, message: { id: 7, error: { code: -32602 } } });
    const noCapabilities = await modernCall(gaggle.port, {
      method: "tools/list",
      params: { _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": undefined }) },
    });
    expect(noCapabilities.status).toBe(400);
    expect(noCapabilities.message.error).toMatchObject({ code: -32602, message: expect.stringContaining("clientCapabilities") });
    const noInfo = await modernCall(gaggle.port, {
      method: "tools/list",
      params: { _meta: envelope({ "io.modelcontextprotocol/clientInfo": undefined }) },
    });
    expect(noInfo.status).toBe(200);
  });

  it("an unsupported version is -32022 naming what is supported; a header that disagrees with the body is -32020, checked first", async () => {
    const unsupported = await modernCall(gaggle.port, {
      id: "v",
      method: "tools/list",
      params: { _meta: envelope({ "io.modelcontextprotocol/protocolVersion": "v999.0.0" }) },
    });
    expect(unsupported).toMatchObject({
      status: 400,
      message: { id: "v", error: { code: -32022, data: { supported: [MODERN], requested: "v999.0.0" } } },
    });
    const mismatched = await modernCall(gaggle.port, {
      method: "tools/list",
      params: { _meta: envelope({ "io.modelcontextprotocol/protocolVersion": "v999.0.0" }) },
      headers: { "mcp-protocol-version": MODERN },
    });
    expect(mismatched).toMatchObject({ status: 400, message: { error: { code: -32020 } } });
  });

  it("Mcp-Method and Mcp-Name must repeat the body exactly (a base64 sentinel is decoded first)", async () => {
    const wrongCase = await modernCall(gaggle.port, { method: "tools/list", headers: { "mcp-method": "TOOLS/LIST" } });
    expect(wrongCase).toMatchObject({ status: 400, message: { error: { code: -32020, message: expect.stringContaining("Mcp-Method") } } });
    const noName = await modernCall(gaggle.port, {
      method: "tools/call",
      params: { name: "echo__echo", arguments: { text: "x" } },
      headers: { "mcp-name": undefined },
    });
    expect(noName).toMatchObject({ status: 400, message: { error: { code: -32020, message: expect.stringContaining("Mcp-Name") } } });
    const otherName = await modernCall(gaggle.port, {
      method: "tools/call",
      params: { name: "echo__echo", arguments: { text: "x" } },
      headers: { "mcp-name": "echo__add" },
    });
    expect(otherName.message.error).toMatchObject({ code: -32020 });
    const encoded = await modernCall(gaggle.port, {
      method: "tools/call",
      params: { name: "echo__echo", arguments: { text: "x" } },
      headers: { "mcp-name": `  =?base64?${Buffer.from("echo__echo").toString("base64")}?=  ` },
    });
    expect(encoded).toMatchObject({ status: 200, message: { result: { content: [{ type: "text", text: "x" }] } } });
  });

  it("methods this era removed, and unknown ones, are -32601 with HTTP 404", async () => {
    for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "unknown/method"]) {
      const answer = await modernCall(gaggle.port, { method, params: { uri: "fixture://readme" } });
      expect({ method, ...answer }).toMatchObject({ method, status: 404, message: { error: { code: -32601 } } });
    }
  });
});

describe("requests reach the children as in a session", () => {
  it("lists and calls tools, reads resources, gets prompts and completes, each result complete and the lists cacheable", async () => {
    const tools = await modernCall(gaggle.port, { method: "tools/list" });
    const names = (tools.message.result as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["execute_child_tool", "echo__echo", "protocol__sample"]));
    expect(tools.message.result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });

    expect((await call("echo__add", { a: 2, b: 3 })).message.result).toEqual({
      content: [{ type: "text", text: '{"sum":5}' }],
      structuredContent: { sum: 5 },
      resultType: "complete",
    });
    const meta = await call("execute_child_tool", { server_id: "echo", tool_name: "echo", arguments: { text: "via meta" } });
    expect(meta.message.result).toMatchObject({ content: [{ text: "via meta" }], resultType: "complete" });

    const read = await modernCall(gaggle.port, { method: "resources/read", params: { uri: "fixture://readme" } });
    expect(read.message.result).toMatchObject({ contents: [{ uri: "fixture://readme" }], resultType: "complete", ttlMs: 0 });
    const prompt = await modernCall(gaggle.port, { method: "prompts/get", params: { name: "echo__greet", arguments: { name: "Ada" } } });
    expect(prompt.message.result).toMatchObject({ messages: [{ content: { text: "Hello, Ada!" } }], resultType: "complete" });
    const templates = await modernCall(gaggle.port, { method: "resources/templates/list" });
    expect(templates.message.result).toMatchObject({ cacheScope: "private" });
    expect((templates.message.result as { resourceTemplates: unknown[] }).resourceTemplates).toContainEqual(
      expect.objectContaining({ uriTemplate: "fixture://items/{id}" }),
    );
  });

  it("a resource like no child's is -32602 carrying the URI (this era forbids -32002)", async () => {
    const missing = await modernCall(gaggle.port, { method: "resources/read", params: { uri: "nobody://nothing-here" } });
    expect(missing.message).toMatchObject({ error: { code: -32602, data: { uri: "nobody://nothing-here" } } });
  });

  it("progress comes on the request's own SSE stream before the result, under the client's token", async () => {
    const response = await modernRequest(gaggle.port, {
      method: "tools/call",
      params: { name: "echo__progress", arguments: { steps: 3, delay_ms: 5 }, _meta: { ...envelope(), progressToken: "p-1" } },
    });
    expect(response.message.headers["content-type"]).toBe("text/event-stream");
    const frames = await response.all();
    const progress = frames.filter((frame) => frame.method === "notifications/progress");
    expect(progress.length).toBe(3);
    for (const frame of progress) expect(frame.params).toMatchObject({ progressToken: "p-1" });
    expect(frames.at(-1)).toMatchObject({ result: { content: [{ text: "done 3" }], resultType: "complete" } });
  });

  it("a child's log reaches the request only when its envelope names a level, and then at that level or above", async () => {
    const quiet = await modernRequest(gaggle.port, {
      method: "tools/call",
      params: { name: "protocol__log", arguments: { level: "error", message: "m1" } },
    });
    expect((await quiet.all()).filter((frame) => frame.method === "notifications/message")).toEqual([]);

    const at = async (level: string, sent: string) => {
      const response = await modernRequest(gaggle.port, {
        method: "tools/call",
        params: { name: "protocol__log", arguments: { level: sent, message: "m2" }, _meta: envelope({ "io.modelcontextprotocol/logLevel": level }) },
      });
      return (await response.all()).filter((frame) => frame.method === "notifications/message");
    };
    expect(await at("warning", "error")).toMatchObject([{ params: { level: "error", data: "m2", logger: "protocol" } }]);
    expect(await at("warning", "info")).toEqual([]);
  });

  it("closing the response stream cancels the call at the child", async () => {
    const protocolStderr = async () => {
      const status = await call("get_child_status", { server_id: "protocol" });
      const text = (status.message.result as { content: Array<{ text: string }> }).content[0]!.text;
      return (JSON.parse(text) as { stderr: string[] }).stderr;
    };
    const callsBefore = (lines: string[]) => lines.filter((line) => line === "call slow_cancel").length;
    const before = callsBefore(await protocolStderr());
    const closing = new AbortController();
    const pending = modernRequest(
      gaggle.port,
      { method: "tools/call", params: { name: "protocol__slow_cancel", arguments: { ms: 30_000 } } },
      closing.signal,
    );
    pending.catch(() => {});
    // Closed once the call has reached the child (the protocol fixture logs each call it takes).
    await until(protocolStderr, (lines) => callsBefore(lines) > before);
    closing.abort();
    // The fixture's own line after the cancel, not sleepFor's "cancelled slow_cancel" written just before it.
    const stderr = await until(protocolStderr, (lines) => lines.some((line) => line.includes("protocol: cancelled slow_cancel")));
    expect(stderr.join("\n")).toContain("protocol: cancelled slow_cancel");
    expect(stderr).toContain("cancel reason: the client closed the response stream");
    // A call whose client went away is recorded as cancelled, not as the child's error.
    const status = await until(
      () => json<Status>(`${gaggle.url.replace(/\/mcp$/, "/")}api/status`),
      (now) => now.recent_calls.some((recent) => recent.target === "protocol__slow_cancel"),
    );
    expect(status.recent_calls.find((recent) => recent.target === "protocol__slow_cancel")).toMatchObject({ outcome: "cancelled", error: null });
    expect(status.children.find((child) => child.server_id === "protocol")).toMatchObject({ errors: 0 });
  });
});

describe("subscriptions/listen", () => {
  it("acknowledges first, then streams the list changes asked for, each tagged with the listen request's id", async () => {
    const tools = await modernRequest(gaggle.port, {
      id: "listen-1",
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true } },
    });
    const prompts = await modernRequest(gaggle.port, {
      id: "listen-2",
      method: "subscriptions/listen",
      params: { notifications: { promptsListChanged: true } },
    });
    const [ack] = await tools.waitFor(1);
    expect(ack).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { toolsListChanged: true }, _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } },
    });
    await prompts.waitFor(1);

    expect((await call("echo__add_tool", { name: "late_tool" })).message.result).toMatchObject({ content: [{ text: "added late_tool" }] });
    const [, changed] = await tools.waitFor(2);
    expect(changed).toEqual({
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
      params: { _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } },
    });
    // The prompts listener asked for no tool changes: after its acknowledgement, nothing.
    expect(prompts.frames).toHaveLength(1);
    tools.abort();
    prompts.abort();
  });

  it("subscribes the resources named, honouring only those a child offers", async () => {
    const listen = await modernRequest(gaggle.port, {
      id: 9,
      method: "subscriptions/listen",
      params: { notifications: { resourceSubscriptions: ["fixture://counter", "nobody://offers-this"] } },
    });
    const [ack] = await listen.waitFor(1);
    expect(ack).toMatchObject({ params: { notifications: { resourceSubscriptions: ["fixture://counter"] } } });
    // The counter tool bumps the resource and reports whether the child holds a subscription to it.
    expect((await call("protocol__bump", {})).message.result).toMatchObject({ content: [{ text: expect.stringContaining("subscribed=true") }] });
    const [, updated] = await listen.waitFor(2);
    expect(updated).toEqual({
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "fixture://counter", _meta: { "io.modelcontextprotocol/subscriptionId": 9 } },
    });
    listen.abort();
  });
});

describe("both eras on one endpoint", () => {
  it("a 2025-11-25 session works beside modern requests", async () => {
    const client = await gaggle.connect();
    expect((await client.callTool({ name: "echo__echo", arguments: { text: "legacy" } })).content).toEqual([{ type: "text", text: "legacy" }]);
    expect((await call("echo__echo", { text: "modern" })).message.result).toMatchObject({ content: [{ text: "modern" }] });
  });

  it("a POST with neither a session nor the envelope gets an error carrying its id", async () => {
    const response = await fetch(gaggle.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 42, method: "tools/list" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ id: 42, error: { message: expect.stringContaining("initialize") } });
  });
});
