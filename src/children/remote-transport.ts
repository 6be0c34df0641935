// Transports for children reached over the network: Streamable HTTP and the legacy SSE transport.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** The configured headers go on every request, the SSE stream's GET included (the SDK merges `requestInit`). */
export function remoteTransport(kind: "http" | "sse", url: string, headers: Record<string, string>): Transport {
  const endpoint = new URL(url);
  const requestInit = { headers };
  return kind === "http" ? new StreamableHTTPClientTransport(endpoint, { requestInit }) : new SSEClientTransport(endpoint, { requestInit });
}
