// The protocol passes through gaggle both ways, over stdio and Streamable HTTP serving, for proxied tools and execute_child_tool.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  GetPromptResultSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ReadResourceResultSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
  type LoggingMessageNotification,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { metaJson, openGateway, type Gateway } from "../helpers/connect.js";
import { until } from "../helpers/poll.js";
import { textOf } from "../helpers/gaggle.js";
import { ROOT, fixtureChild } from "../helpers/paths.js";

/** A child whose prompt and resource answer with the request `_meta` they received (the fixtures do not show it). */
const PEEK_SERVER = `
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
const server = new McpServer({ name: "peek", version: "0.0.0" });
const seen = (extra) => JSON.stringify(extra._meta ?? null);
server.registerPrompt("peek", {}, (extra) => ({ messages: [{ role: "user", content: { type: "text", text: seen(extra) } }] }));
server.registerResource("peek", "peek://meta", {}, async (uri, extra) => ({ contents: [{ uri: uri.href, text: seen(extra) }] }));
await server.connect(new StdioServerTransport());`;
const peekChild = `[mcp_servers.peek]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ["--input-type=module", "-e", ${JSON.stringify(PEEK_SERVER)}]\ncwd = ${JSON.stringify(ROOT)}\n`;

const config = [
  '[gateway]\nexpose = "both"\nlist_wait_ms = 30000\n',
  fixtureChild("protocol", "protocol.mjs"),
  fixtureChild("echo", "echo.mjs"),
  peekChild,
].join("\n");
const CAPABLE = { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } };
const ROOTS = [{ uri: "file:///tmp/gaggle-roots", name: "test roots" }];
const COUNTER = "fixture://counter";

type Via = "proxy" | "meta";
type LogParams = LoggingMessageNotification["params"];

/** Calls a child's tool by its exposed name (`<child>__<tool>`) or through execute_child_tool. */
function callChild(
  client: Client,
  via: Via,
  child: string,
  tool: string,
  args: Record<string, unknown> = {},
  options?: RequestOptions & { meta?: Record<string, unknown> },
): Promise<CallToolResult> {
  const params =
    via === "proxy"
      ? { name: `${child}__${tool}`, arguments: args }
      : { name: "execute_child_tool", arguments: { server_id: child, tool_name: tool, arguments: args } };
  const request = { method: "tools/call" as const, params: { ...params, ...(options?.meta && { _meta: options.meta }) } };
  return client.request(request, CallToolResultSchema, options) as Promise<CallToolResult>;
}

/** The child's stderr lines after its last `call <tool>` line (undefined while there is none in the tail). */
function afterLastCall(lines: string[], tool: string): string[] | undefined {
  const at = lines.lastIndexOf(`call ${tool}`);
  return at < 0 ? undefined : lines.slice(at + 1);
}

describe.each(["stdio", "http"] as const)("passthrough over %s", (transport) => {
  let gateway: Gateway;
  let client: Client;
  const logs: LogParams[] = [];
  const updates: string[] = [];
  const samplingPrompts: string[] = [];

  beforeAll(async () => {
    gateway = await openGateway(transport, config);
    client = await gateway.connect(CAPABLE);
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      const content = request.params.messages[0]?.content;
      const prompt = content && "text" in content ? String(content.text) : "?";
      samplingPrompts.push(prompt);
      return { model: "test-model", role: "assistant", content: { type: "text", text: `answer to ${prompt}` } };
    });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { name: "Ada" } }));
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: ROOTS }));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => void logs.push(note.params));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => void updates.push(note.params.uri));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const childStderr = async () => (await metaJson<{ stderr: string[] }>(client, "get_child_status", { server_id: "protocol" })).stderr;

  describe.each(["proxy", "meta"] as const)("a tools/call made via %s", (via) => {
    it("relays the child's progress under the client's progress token", async () => {
      const progress: Progress[] = [];
      const result = await callChild(client, via, "protocol", "progress", { steps: 3 }, { onprogress: (p) => void progress.push(p) });
      expect(textOf(result)).toMatch(/^done token=(?!none)\S+$/);
      expect(progress).toEqual([1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i}` })));
    });

    it("forwards the child's sampling request to the calling client and returns its answer", async () => {
      const result = await callChild(client, via, "protocol", "sample", { prompt: `haiku ${via}` });
      expect(result).toEqual({ content: [{ type: "text", text: `sampled: answer to haiku ${via}` }] });
      expect(samplingPrompts).toContain(`haiku ${via}`);
    });

    it("forwards the child's elicitation request to the calling client", async () => {
      const result = await callChild(client, via, "protocol", "elicit", { message: "who are you?" });
      expect(JSON.parse(textOf(result))).toEqual({ action: "accept", content: { name: "Ada" } });
    });

    it("forwards the child's roots/list request to the calling client", async () => {
      expect(JSON.parse(textOf(await callChild(client, via, "protocol", "roots")))).toEqual({ roots: ROOTS });
    });

    it("delivers the child's log messages with the child's name as logger", async () => {
      const [plain, named] = [`plain ${via}`, `named ${via}`];
      await callChild(client, via, "protocol", "log", { level: "warning", message: plain });
      await callChild(client, via, "protocol", "log", { level: "warning", message: named, logger: "sub" });
      const got = await until(
        () => logs.filter((m) => m.data === plain || m.data === named),
        (found) => found.length === 2,
      );
      expect(got).toEqual([
        { level: "warning", data: plain, logger: "protocol" },
        { level: "warning", data: named, logger: "protocol/sub" },
      ]);
    });

    it("sends notifications/cancelled to the child when the client aborts the call", async () => {
      const abort = new AbortController();
      const pending = callChild(client, via, "protocol", "slow_cancel", { ms: 20_000 }, { signal: abort.signal });
      pending.catch(() => {});
      const started = await until(childStderr, (lines) => {
        const after = afterLastCall(lines, "slow_cancel");
        return after !== undefined && !after.includes("cancelled slow_cancel");
      });
      expect(afterLastCall(started, "slow_cancel")).toBeDefined();
      abort.abort("the test gave up");
      await expect(pending).rejects.toThrow();
      const lines = await until(childStderr, (l) => afterLastCall(l, "slow_cancel")?.includes("cancelled slow_cancel") === true);
      expect(afterLastCall(lines, "slow_cancel")).toEqual(expect.arrayContaining(["notification notifications/cancelled", "cancelled slow_cancel"]));
      // The child's queue slot is free again.
      expect(textOf(await callChild(client, via, "protocol", "log_level"))).toMatch(/^\w+$/);
    });

    it("passes result _meta, annotations and resource_link out, and the request _meta (not the progress token) in", async () => {
      const meta = { progressToken: "client-token", "test/trace": `trace-${via}` };
      const result = await callChild(client, via, "protocol", "meta_echo", {}, { meta });
      expect(result._meta).toEqual({ "fixture/meta": "kept" });
      const [annotated, link] = result.content;
      expect(annotated).toMatchObject({ type: "text", annotations: { audience: ["user"], priority: 0.5 } });
      expect(link).toEqual({ type: "resource_link", uri: COUNTER, name: "counter" });
      const { requestMeta } = JSON.parse(textOf(result)) as { requestMeta: Record<string, unknown> };
      expect(requestMeta["test/trace"]).toBe(`trace-${via}`);
      expect(requestMeta.progressToken).not.toBe("client-token");
    });

    it("passes structuredContent through unchanged", async () => {
      const result = await callChild(client, via, "echo", "add", { a: 2, b: 3 });
      expect(result).toEqual({ content: [{ type: "text", text: '{"sum":5}' }], structuredContent: { sum: 5 } });
    });
  });

  describe("other requests and notifications", () => {
    it("passes the client's request _meta of prompts/get and resources/read on to the child", async () => {
      const _meta = { progressToken: "client-token", "test/trace": "peek" };
      const prompt = await client.request({ method: "prompts/get", params: { name: "peek__peek", _meta } }, GetPromptResultSchema);
      const promptText = prompt.messages[0]?.content.type === "text" ? prompt.messages[0].content.text : "";
      expect(JSON.parse(promptText)).toMatchObject({ "test/trace": "peek" });
      const read = await client.request({ method: "resources/read", params: { uri: "peek://meta", _meta } }, ReadResourceResultSchema);
      const readText = read.contents[0] && "text" in read.contents[0] ? read.contents[0].text : "";
      expect(JSON.parse(readText)).toMatchObject({ "test/trace": "peek" });
    });

    it("answers ping", async () => {
      await expect(client.ping()).resolves.toEqual({});
    });

    it("routes completions to the owning child: prompts by exposed name, templates by uriTemplate", async () => {
      const prompt = await client.complete({ ref: { type: "ref/prompt", name: "protocol__review" }, argument: { name: "language", value: "ja" } });
      expect(prompt.completion.values).toEqual(["javascript", "java"]);
      const template = await client.complete({
        ref: { type: "ref/resource", uri: "fixture://notes/{topic}" },
        argument: { name: "topic", value: "alph" },
      });
      expect(template.completion.values).toEqual(["alpha", "alphabet"]);
    });

    it("sends notifications/resources/updated to a subscribed client, and stops after unsubscribe", async () => {
      await client.subscribeResource({ uri: COUNTER });
      const bumped = textOf(await callChild(client, "proxy", "protocol", "bump"));
      expect(bumped).toMatch(/^counter=\d+ subscribed=true$/);
      expect(
        await until(
          () => updates,
          (uris) => uris.includes(COUNTER),
        ),
      ).toContain(COUNTER);
      const read = await client.readResource({ uri: COUNTER });
      expect(read.contents).toEqual([{ uri: COUNTER, mimeType: "text/plain", text: bumped.split(" ")[0] }]);
      await client.unsubscribeResource({ uri: COUNTER });
      expect(textOf(await callChild(client, "proxy", "protocol", "bump"))).toMatch(/^counter=\d+ subscribed=false$/);
    });

    it("tells the running child when the client's roots change", async () => {
      await client.sendRootsListChanged();
      const lines = await until(childStderr, (l) => l.includes("notification notifications/roots/list_changed"));
      expect(lines).toContain("notification notifications/roots/list_changed");
    });

    it("answers the child's sampling request with -32601 when the calling client lacks the capability", async () => {
      const bare = await gateway.connect({ capabilities: {} });
      for (const via of ["proxy", "meta"] as const) {
        const result = await callChild(bare, via, "protocol", "sample", { prompt: "nobody will answer" });
        expect(result.isError).toBe(true);
        // The fixture reports the JSON-RPC error it got: code -32601 and gaggle's explanation.
        expect(textOf(result)).toMatch(/^sampling failed: MCP error -32601: .*sampling\/createMessage is not available/);
      }
      expect(samplingPrompts).not.toContain("nobody will answer");
    });

    it("stops info messages after logging/setLevel error, and passes the level to the child", async () => {
      await client.setLoggingLevel("error");
      expect(textOf(await callChild(client, "proxy", "protocol", "log_level"))).toBe("error");
      await callChild(client, "proxy", "protocol", "log", { level: "info", message: "quiet info" });
      await callChild(client, "proxy", "protocol", "log", { level: "error", message: "loud error" });
      await until(
        () => logs,
        (all) => all.some((m) => m.data === "loud error"),
      );
      expect(logs.map((m) => m.data)).toContain("loud error");
      expect(logs.map((m) => m.data)).not.toContain("quiet info");
    });

    it("filters per client: a client at error gets no info even while another client asks the child for debug", async () => {
      const verbose = await gateway.connect({ capabilities: {} });
      const verboseLogs: LogParams[] = [];
      verbose.setNotificationHandler(LoggingMessageNotificationSchema, (note) => void verboseLogs.push(note.params));
      await verbose.setLoggingLevel("debug");
      // One gaggle serves both HTTP sessions, so the child logs at the most verbose level any client asked for.
      expect(textOf(await callChild(client, "proxy", "protocol", "log_level"))).toBe(transport === "http" ? "debug" : "error");
      await callChild(client, "proxy", "protocol", "log", { level: "info", message: "info for nobody" });
      await callChild(client, "proxy", "protocol", "log", { level: "error", message: "error for the quiet client" });
      await until(
        () => logs,
        (all) => all.some((m) => m.data === "error for the quiet client"),
      );
      expect(logs.map((m) => m.data)).not.toContain("info for nobody");
      await callChild(verbose, "proxy", "protocol", "log", { level: "info", message: "info for the verbose client" });
      const got = await until(
        () => verboseLogs,
        (all) => all.some((m) => m.data === "info for the verbose client"),
      );
      expect(got.map((m) => m.data)).toContain("info for the verbose client");
    });

    it("unsubscribes through the child that took the subscription, without starting a child that was closed", async () => {
      await client.subscribeResource({ uri: COUNTER });
      await metaJson(client, "close_child_session", { server_id: "protocol" });
      await client.unsubscribeResource({ uri: COUNTER });
      expect((await metaJson<{ status: string }>(client, "get_child_status", { server_id: "protocol" })).status).toBe("stopped");
    });
  });
});
