// The SDK behaviour ClientConnection relies on to answer tools/call without the SDK's Protocol, pinned against the real Server.
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CreateMessageResultSchema, LATEST_PROTOCOL_VERSION, type CallToolResult, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { ClientGone } from "../../src/children/calls/cancellation.js";
import type { CallExtra } from "../../src/gateway/client-session.js";
import type { ToolCallParams } from "../../src/gateway/tool-handlers.js";
import type { Link, LinkReceiver } from "../../src/shared/link.js";
import { WireError } from "../../src/shared/errors.js";
import { ClientConnection } from "../../src/transport/client-connection.js";

/** A link that keeps what the connection sends, with its options, and starts when the SDK's connect() starts it. */
class RecordingLink implements Link {
  readonly sent: Array<{ message: JSONRPCMessage; options: TransportSendOptions | undefined }> = [];
  receiver: LinkReceiver | undefined;
  closes = 0;

  async start(receiver: LinkReceiver): Promise<void> {
    this.receiver = receiver;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.sent.push({ message, options });
  }

  async close(): Promise<void> {
    this.closes++;
    this.receiver?.closed();
  }

  answerTo(id: string | number): JSONRPCMessage | undefined {
    return this.sent.find(({ message }) => "id" in message && message.id === id && !("method" in message))?.message;
  }
}

/** The call's handler: each call waits until the test settles it, and keeps the extra it was given. */
function heldCalls() {
  const calls: Array<{ params: ToolCallParams; extra: CallExtra; settle: (result: CallToolResult) => void; fail: (error: Error) => void }> = [];
  const handler = (params: ToolCallParams, extra: CallExtra) =>
    new Promise<CallToolResult>((settle, fail) => {
      calls.push({ params, extra, settle, fail });
    });
  return { calls, handler };
}

/** The session's answer to a failed call: a refusal (a WireError) thrown on, anything else a result naming the tool. */
function callFailed(name: string, error: unknown): CallToolResult {
  if (error instanceof WireError) throw error;
  return { isError: true, content: [{ type: "text", text: `${name} failed: ${(error as Error).message}` }] };
}

async function connected() {
  const server = new Server({ name: "pinned", version: "0" }, { capabilities: { tools: {}, logging: {} } });
  const link = new RecordingLink();
  const { calls, handler } = heldCalls();
  let closed = 0;
  const connection = new ClientConnection(link, { session: { server, callTool: handler, callFailed, closed: () => closed++, requested: () => {} } });
  await connection.open();
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const initialize = {
    jsonrpc: "2.0" as const,
    id: "init",
    method: "initialize",
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: { sampling: {} }, clientInfo: { name: "pin", version: "0" } },
  };
  connection.receive(initialize);
  await tick();
  connection.receive({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { server, link, calls, connection, tick, closedCount: () => closed };
}

describe("ClientConnection over the SDK's Server (the SDK behaviour its tools/call bypass relies on)", () => {
  it("connects the Server with an ordinary connect(), which starts the link once its callbacks are in place", async () => {
    const { link } = await connected();
    expect(link.receiver).toBeDefined();
    // The Server answered initialize through the link: the connection handed it the message, and its reply came out.
    expect(link.answerTo("init")).toMatchObject({ result: { protocolVersion: LATEST_PROTOCOL_VERSION } });
  });

  it("answers tools/call itself: the Server, which has no tools/call handler, never sees it and sends nothing for it", async () => {
    const { link, calls, connection, tick } = await connected();
    connection.receive({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } });
    await tick();
    expect(calls.map((call) => call.params)).toEqual([{ name: "echo", arguments: { text: "hi" } }]);
    // Given the request, the SDK would have answered -32601 at once.
    expect(link.answerTo(7)).toBeUndefined();
    calls[0]!.settle({ content: [{ type: "text", text: "hi" }] });
    await tick();
    expect(link.answerTo(7)).toEqual({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "hi" }] } });
  });

  it("answers a call that failed as the session says, a refusal as a JSON-RPC error, and params it cannot read before any call", async () => {
    const { link, calls, connection, tick } = await connected();
    connection.receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "a" } });
    connection.receive({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "b" } });
    connection.receive({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: 7 } });
    calls[0]!.fail(new Error("the child died"));
    calls[1]!.fail(new WireError(-32602, "Unknown tool: b"));
    await tick();
    expect(calls.map((call) => call.params.name)).toEqual(["a", "b"]);
    expect(link.answerTo(1)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { isError: true, content: [{ type: "text", text: "a failed: the child died" }] },
    });
    expect(link.answerTo(2)).toMatchObject({ id: 2, error: { code: -32602, message: "Unknown tool: b" } });
    expect(link.answerTo(3)).toMatchObject({ id: 3, error: { code: -32602, message: expect.stringContaining("params.name") } });
  });

  it("sends, through the Server, messages related to a request the Server never saw, with its id for the transport", async () => {
    const { link, calls, connection, tick } = await connected();
    connection.receive({ jsonrpc: "2.0", id: "call-1", method: "tools/call", params: { name: "sample" } });
    await tick();
    const { extra } = calls[0]!;
    await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: "working" } });
    const logged = link.sent.find(({ message }) => "method" in message && message.method === "notifications/message");
    expect(logged?.options?.relatedRequestId).toBe("call-1");

    const asked = extra.sendRequest({ method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } }, CreateMessageResultSchema);
    await tick();
    const request = link.sent.find(({ message }) => "method" in message && message.method === "sampling/createMessage");
    expect(request?.options?.relatedRequestId).toBe("call-1");
    // The client's answer to the Server's request is the Server's: the connection hands it every response.
    const id = (request!.message as { id: string | number }).id;
    connection.receive({ jsonrpc: "2.0", id, result: { role: "assistant", content: { type: "text", text: "ok" }, model: "m" } });
    await expect(asked).resolves.toMatchObject({ model: "m" });
  });

  it("takes notifications/cancelled for its own call, and hands the Server those for the Server's requests", async () => {
    const { link, calls, connection, tick } = await connected();
    connection.receive({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "slow" } });
    await tick();
    connection.receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9, reason: "enough" } });
    expect(calls[0]!.extra.cancel?.aborted).toBe(true);
    expect(calls[0]!.extra.cancel?.reason).toBe("enough");
    calls[0]!.settle({ content: [] });
    await tick();
    // No reply for a cancelled request, as the SDK does for its own.
    expect(link.answerTo(9)).toBeUndefined();
    // A cancellation the connection does not own reaches the Server, which ignores one for a request it does not know.
    connection.receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 404 } });
    connection.receive({ jsonrpc: "2.0", id: "p", method: "ping" });
    await tick();
    expect(link.answerTo("p")).toMatchObject({ result: {} });
  });

  it("cancels its calls and tells the Server and the session when the link closes", async () => {
    const { server, calls, connection, tick, closedCount } = await connected();
    let serverClosed = false;
    server.onclose = () => (serverClosed = true);
    connection.receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "slow" } });
    await tick();
    await connection.close();
    expect(calls[0]!.extra.cancel?.aborted).toBe(true);
    expect(calls[0]!.extra.cancel?.reason).toEqual(new ClientGone("the client's session ended"));
    expect(serverClosed).toBe(true);
    expect(closedCount()).toBe(1);
    await expect(server.notification({ method: "notifications/tools/list_changed" })).rejects.toThrow(/Not connected/);
  });
});
