// Server-sent event streams gaggle holds open (a session's listen stream on /mcp, the admin status stream at
// /api/events), read event by event on a connection of their own, with whether gaggle has ended them.
import { request } from "node:http";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { INITIALIZE, postMcp } from "./raw-http.js";

export interface StreamEvent {
  /** The `event:` field; "message" when the event names none. */
  event: string;
  data: string;
}

export interface EventStream {
  status: number;
  /** Every event heard so far, in order. */
  readonly events: StreamEvent[];
  /** Whether the response has ended or its connection closed: gaggle ended the stream. */
  closed(): boolean;
  /** Closes the connection from this end. */
  close(): void;
}

/** A GET of `path` on 127.0.0.1:port with `headers`; resolves once the response's head has come. */
export function openEventStream(port: number, path: string, headers: Record<string, string>): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method: "GET", path, headers: { accept: "text/event-stream", ...headers }, agent: false },
      (res) => {
        const events: StreamEvent[] = [];
        let ended = false;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
          let at: number;
          while ((at = text.indexOf("\n\n")) >= 0) {
            const lines = text.slice(0, at).split("\n");
            text = text.slice(at + 2);
            const field = (name: string) =>
              lines
                .filter((line) => line.startsWith(`${name}:`))
                .map((line) => line.slice(name.length + 1).trim())
                .join("\n");
            if (lines.some((line) => line.startsWith("data:"))) events.push({ event: field("event") || "message", data: field("data") });
          }
        });
        // A stream ended by destroying its socket ends here with an "aborted" error: that is the closing awaited.
        res.on("error", () => (ended = true));
        res.on("close", () => (ended = true));
        resolve({ status: res.statusCode ?? 0, events, closed: () => ended, close: () => req.destroy() });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/**
 * A 2025-11-25 session opened with raw requests (initialize, then notifications/initialized), and its standalone
 * listen stream: the GET on /mcp that carries what gaggle sends unasked, such as list_changed.
 */
export async function openListenStream(port: number, headers: Record<string, string>): Promise<EventStream & { session: string }> {
  const initialized = await postMcp(port, INITIALIZE, headers);
  const session = initialized.headers["mcp-session-id"];
  if (initialized.status !== 200 || typeof session !== "string") throw new Error(`initialize answered ${initialized.status}: ${initialized.body}`);
  const sessionHeaders = { ...headers, "mcp-session-id": session, "mcp-protocol-version": LATEST_PROTOCOL_VERSION };
  const notified = await postMcp(port, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), sessionHeaders);
  if (notified.status !== 202) throw new Error(`notifications/initialized answered ${notified.status}: ${notified.body}`);
  const stream = await openEventStream(port, "/mcp", sessionHeaders);
  if (stream.status !== 200) throw new Error(`the listen stream's GET answered ${stream.status}`);
  return Object.assign(stream, { session });
}
