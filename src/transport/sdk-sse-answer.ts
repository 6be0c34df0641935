// The one place gaggle reaches into the SDK's Streamable HTTP server transport: a 2025 session's SSE events are
// written with messageText, so a child's answer passed on unchanged but for its id is written as the child wrote it.
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { messageText } from "../shared/json-rpc-codec.js";

/** What the SDK's web-standard transport writes an SSE event with, and tells a failed write to. */
interface SseWriter {
  writeSSEEvent(
    controller: { enqueue(chunk: Uint8Array): void },
    encoder: { encode(text: string): Uint8Array },
    message: JSONRPCMessage,
    eventId?: string,
  ): boolean;
  onerror?: ((error: Error) => void) | undefined;
}

/**
 * The SDK's Node transport holds a WebStandardStreamableHTTPServerTransport as `_webStandardTransport`, whose
 * `writeSSEEvent` writes `event: message`, an `id:` line for a stored event, and `data: JSON.stringify(message)`.
 * This puts in its place the same event with the message's text from messageText, which is JSON.stringify's for
 * every message but a kept child answer. test/transport/sdk-sse-answer.test.ts pins both the members and the
 * event's format; a transport without them is left as it is, and its answers are serialized as before.
 */
export function writeAnswersAsWritten(transport: StreamableHTTPServerTransport): void {
  const inner = (transport as unknown as { _webStandardTransport?: Partial<SseWriter> })._webStandardTransport;
  if (inner === undefined || typeof inner.writeSSEEvent !== "function" || inner.writeSSEEvent.length !== 4) return;
  const writer = inner as SseWriter;
  writer.writeSSEEvent = (controller, encoder, message, eventId) => {
    try {
      controller.enqueue(encoder.encode(`event: message\n${eventId ? `id: ${eventId}\n` : ""}data: ${messageText(message)}\n\n`));
      return true;
    } catch (error) {
      writer.onerror?.(error as Error);
      return false;
    }
  };
}
