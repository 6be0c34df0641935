// What the SDK's HTTP client transports say about a failure only in words: each place it discards every field, read
// here and nowhere else, and pinned by test/children/wire/sdk-wording.test.ts to the SDK's own behaviour, so that an
// SDK that words it otherwise fails that test rather than gaggle's reading of a failure.
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/**
 * True for the Streamable HTTP transport's refusal of its standalone GET stream. The SDK gives the refusal of a GET
 * and of a POST the same class and the status as `code`; which request it was is only in the message.
 */
export function refusedGetStream(error: StreamableHTTPError): boolean {
  return error.message.startsWith("Streamable HTTP error: Failed to open SSE stream");
}

/**
 * The HTTP status of the legacy SSE transport's failed POST, which the SDK throws as a plain Error with the
 * status in its message only; undefined for any other error.
 */
export function ssePostStatus(error: unknown): number | undefined {
  if (!(error instanceof Error) || error instanceof StreamableHTTPError) return undefined;
  const status = /^Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(error.message)?.[1];
  return status === undefined ? undefined : Number(status);
}

/**
 * True when the Streamable HTTP transport reports a response stream that failed while it was read: the SDK
 * reports it as a new Error "SSE stream disconnected: <the failure>" and keeps nothing of the failure but its text.
 */
export function streamDisconnected(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("SSE stream disconnected");
}
