// Owns the bench's lean Streamable HTTP client: what a server's throughput is measured with. The SDK's client spends
// about a millisecond of CPU per call (fetch, a web-streams SSE parser, an abort listener per request kept until it is
// collected), more than either server the HTTP bench compares; on a machine of a few cores it is what a run with
// many calls in flight measures. This one speaks the same protocol (initialize, the session and protocol version
// headers, one POST per request, its answer read as JSON or as an SSE stream) on node:http with kept-alive sockets.
import { Agent, request } from "node:http";

const PROTOCOL_VERSION = "2025-11-25";

/** An MCP client session over Streamable HTTP, with callTool as the SDK's Client has it (what echoCaller calls). */
export class LeanHttpClient {
  constructor(url, agent) {
    this.url = new URL(url);
    this.agent = agent;
    this.sessionId = undefined;
    this.nextId = 1;
  }

  /** A session with the server at `url`, initialized; `sockets` bounds the connections (one per call in flight). */
  static async connect(url, sockets = 64) {
    const client = new LeanHttpClient(url, new Agent({ keepAlive: true, maxSockets: sockets }));
    const init = await client.post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "gaggle-bench-lean", version: "0" } },
    });
    if (init.error) throw new Error(`initialize at ${url}: ${JSON.stringify(init.error)}`);
    await client.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    return client;
  }

  async callTool(params, _schema, { timeout } = {}) {
    const answer = await this.post({ jsonrpc: "2.0", id: this.nextId++, method: "tools/call", params }, timeout);
    if (answer.error) throw new Error(`tools/call: ${answer.error.message}`);
    return answer.result;
  }

  async close() {
    if (this.sessionId !== undefined) await this.send("DELETE", undefined).catch(() => {});
    this.agent.destroy();
  }

  /** Sends one message; resolves with its answer (a request's), or undefined (a notification's 202). */
  async post(message, timeout) {
    const { status, headers, body } = await this.send("POST", JSON.stringify(message), timeout);
    if (status === 202) return undefined;
    if (status !== 200) throw new Error(`${message.method}: HTTP ${status}: ${body.slice(0, 300)}`);
    this.sessionId ??= headers["mcp-session-id"];
    return String(headers["content-type"]).startsWith("text/event-stream") ? answerInEvents(body, message.id) : JSON.parse(body);
  }

  send(method, body, timeout = 10_000) {
    const headers = { accept: "application/json, text/event-stream", "content-type": "application/json" };
    if (this.sessionId !== undefined) {
      headers["mcp-session-id"] = this.sessionId;
      headers["mcp-protocol-version"] = PROTOCOL_VERSION;
    }
    return new Promise((resolve, reject) => {
      const req = request(this.url, { method, headers, agent: this.agent, timeout }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
        res.on("error", reject);
      });
      req.on("timeout", () => req.destroy(new Error(`${method} ${this.url.pathname}: no answer in ${timeout} ms`)));
      req.on("error", reject);
      req.end(body);
    });
  }
}

/** The answer to request `id` among the events of an SSE body (the stream ends after it). */
function answerInEvents(body, id) {
  for (const event of body.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(line[5] === " " ? 6 : 5))
      .join("\n");
    if (data === "") continue;
    const message = JSON.parse(data);
    if (message.id === id && ("result" in message || "error" in message)) return message;
  }
  throw new Error(`no answer to request ${id} in the event stream: ${body.slice(0, 300)}`);
}
