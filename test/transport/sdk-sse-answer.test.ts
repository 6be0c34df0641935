// The SDK behaviour src/transport/sdk-sse-answer.ts relies on: where the Streamable HTTP server transport writes an
// SSE event, and how; and that gaggle's writer writes the same event, with a kept child answer as the child wrote it.
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { keepAnswerLine } from "../../src/shared/answer-line.js";
import { decodeMessage } from "../../src/shared/json-rpc-codec.js";
import { writeAnswersAsWritten } from "../../src/transport/sdk-sse-answer.js";

type Write = (
  controller: { enqueue(chunk: Uint8Array): void },
  encoder: { encode(text: string): Uint8Array },
  message: JSONRPCMessage,
  eventId?: string,
) => boolean;

/** The transport's event writer, as the SDK holds it. */
function writerOf(transport: StreamableHTTPServerTransport): { writeSSEEvent: Write } {
  return (transport as unknown as { _webStandardTransport: { writeSSEEvent: Write } })._webStandardTransport;
}

/** The text one call of `write` enqueues. */
function written(write: Write, message: JSONRPCMessage, eventId?: string): string {
  const chunks: Uint8Array[] = [];
  expect(write({ enqueue: (chunk) => chunks.push(chunk) }, new TextEncoder(), message, eventId)).toBe(true);
  return Buffer.concat(chunks).toString("utf8");
}

const transport = () => new StreamableHTTPServerTransport({ sessionIdGenerator: () => "s" });
const messages: JSONRPCMessage[] = [
  { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: 'café \n "quoted"' }] } },
  { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t", progress: 1 } },
  { jsonrpc: "2.0", id: "x", error: { code: -32602, message: "bad" } },
];

describe("the SDK's SSE event writer", () => {
  it("is the web-standard transport's writeSSEEvent, taking four arguments, writing event, id and JSON.stringify's data", () => {
    const write = writerOf(transport()).writeSSEEvent;
    expect(typeof write).toBe("function");
    expect(write.length).toBe(4);
    const sdk = write.bind(writerOf(transport()));
    for (const message of messages) {
      expect(written(sdk, message)).toBe(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
      expect(written(sdk, message, "e1")).toBe(`event: message\nid: e1\ndata: ${JSON.stringify(message)}\n\n`);
    }
  });

  it("is replaced by one that writes the same events, and a kept child answer as the child wrote it with the client's id", () => {
    const sdk = writerOf(transport());
    const ours = transport();
    writeAnswersAsWritten(ours);
    const write = writerOf(ours).writeSSEEvent;
    for (const message of messages) {
      for (const eventId of [undefined, "e1"]) expect(written(write, message, eventId)).toBe(written(sdk.writeSSEEvent.bind(sdk), message, eventId));
    }
    const line = '{"result":{"n":1.50,"big":12345678901234567890},"jsonrpc":"2.0","id":"gaggle-1"}';
    const answer = decodeMessage(line) as { result: Record<string, unknown> };
    keepAnswerLine(answer.result, line, "gaggle-1");
    expect(written(write, { jsonrpc: "2.0", id: 9, result: answer.result })).toBe(
      'event: message\ndata: {"result":{"n":1.50,"big":12345678901234567890},"jsonrpc":"2.0","id":9}\n\n',
    );
  });
});
