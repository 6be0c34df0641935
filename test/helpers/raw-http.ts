// Raw HTTP against a gaggle on loopback (node:http, so Host and Origin can be set), and SDK clients on an explicit URL.
import { request } from "node:http";
import { Client, type ClientOptions } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RawRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  /** Sent with a Content-Length, unless `chunks` is given instead. */
  body?: string;
  /** Sent one after another with chunked transfer encoding (no Content-Length). */
  chunks?: string[];
}

/** What an MCP POST carries; `headers` are added on top. */
export const MCP_POST_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

export const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "raw-http-test", version: "0.0.0" } },
});

export const TOOLS_LIST = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });

/** One request on a fresh connection to 127.0.0.1:port; resolves with the whole response, or rejects after `ms`. */
export function rawRequest(port: number, options: RawRequest = {}, ms = 10_000): Promise<RawResponse> {
  const { method = "GET", path = "/mcp", headers = {}, body, chunks } = options;
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers, agent: false, timeout: ms }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} got no complete answer within ${ms}ms`)));
    req.on("error", reject);
    if (chunks) {
      for (const chunk of chunks) req.write(chunk);
      req.end();
    } else {
      req.end(body);
    }
  });
}

/** A POST to /mcp with the MCP headers, plus `headers`. */
export function postMcp(port: number, body: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(port, { method: "POST", headers: { ...MCP_POST_HEADERS, ...headers }, body });
}

/** The JSON-RPC error message of a gateway refusal. */
export function errorMessage(response: RawResponse): string {
  return (JSON.parse(response.body) as { error: { message: string } }).error.message;
}

/** An SDK client on `url` (which must name 127.0.0.1), with `headers` on every request. */
export async function connectClient(
  url: string,
  options: { headers?: Record<string, string>; client?: ClientOptions; name?: string } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: options.name ?? "raw-http-test", version: "0.0.0" }, options.client ?? { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: options.headers ?? {} } });
  await client.connect(transport);
  return { client, transport };
}

/** The Streamable HTTP transport under an SDK client, to learn its session id or end its session. */
export function httpTransportOf(client: Client): StreamableHTTPClientTransport {
  const transport = client.transport;
  if (!(transport instanceof StreamableHTTPClientTransport)) throw new Error("expected a client on a Streamable HTTP transport");
  return transport;
}
