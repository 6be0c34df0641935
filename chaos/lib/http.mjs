// Owns raw HTTP against a gaggle on loopback: one request per connection, any method, path, headers and body
// (Host and Origin included), and the JSON-RPC messages its answer holds, whether JSON or an SSE stream.
import { request } from "node:http";

export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};

/** Resolves with { status, headers, body }, or { timedOut: true } when no whole answer came within `ms`. */
export function rawRequest(port, { method = "POST", path = "/mcp", headers = {}, body, chunked = false }, ms = 15_000) {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers, agent: false, setHost: !("host" in headers) }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () => finish({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", (error) => finish({ error: error.message }));
    });
    const timer = setTimeout(() => {
      finish({ timedOut: true });
      req.destroy();
    }, ms);
    let done = false;
    function finish(outcome) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(outcome);
    }
    req.on("error", (error) => finish({ error: error.code ?? error.message }));
    if (body === undefined) return void req.end();
    if (!chunked) return void req.end(body);
    const data = Buffer.from(body);
    const cut = Math.floor(data.length / 2);
    req.write(data.subarray(0, cut));
    req.end(data.subarray(cut));
  });
}

/** The JSON-RPC messages of an answer: a JSON body (one message or an array), or the data lines of an SSE stream. */
export function messagesOf({ headers, body }) {
  const parse = (text) => {
    try {
      const value = JSON.parse(text);
      return Array.isArray(value) ? value : [value];
    } catch {
      return [];
    }
  };
  if (String(headers?.["content-type"] ?? "").startsWith("text/event-stream")) {
    return body
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .flatMap((line) => parse(line.slice(5)));
  }
  return body ? parse(body) : [];
}

/** Opens a 2025 session: initialize, then notifications/initialized; resolves with its id. */
export async function openSession(port) {
  const initialize = {
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "gaggle-chaos", version: "0" } },
  };
  const answer = await rawRequest(port, { headers: MCP_HEADERS, body: JSON.stringify(initialize) });
  const session = answer.headers?.["mcp-session-id"];
  if (answer.status !== 200 || typeof session !== "string") throw new Error(`initialize over HTTP failed: ${JSON.stringify(answer).slice(0, 300)}`);
  const headers = { ...MCP_HEADERS, "mcp-session-id": session };
  await rawRequest(port, { headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
  return session;
}
