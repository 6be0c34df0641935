// Owns MCP sessions an attack opens over Streamable HTTP with a bearer token: initialize, calls of the meta-tools,
// resource reads and the session's end, each a raw request whose answer is read as it came.
import { MCP_HEADERS, messagesOf, rawRequest } from "./http.mjs";

const INITIALIZE = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "gaggle-chaos", version: "0" } };

/**
 * A 2025-11-25 session on `port` sent with `token`; each request resolves with its JSON-RPC answer, or
 * `{ hung: true }` when none came within `ms`.
 */
export async function openTokenSession(port, token, ms = 30_000) {
  const auth = { ...MCP_HEADERS, authorization: `Bearer ${token}` };
  const opened = await rawRequest(
    port,
    { headers: auth, body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: INITIALIZE }) },
    ms,
  );
  const id = opened.headers?.["mcp-session-id"];
  if (opened.status !== 200 || typeof id !== "string") throw new Error(`initialize with a token failed: ${JSON.stringify(opened).slice(0, 300)}`);
  const headers = { ...auth, "mcp-session-id": id };
  await rawRequest(port, { headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) }, ms);
  let next = 1;
  const request = async (method, params) => {
    const requestId = next++;
    const answer = await rawRequest(port, { headers, body: JSON.stringify({ jsonrpc: "2.0", id: requestId, method, params }) }, ms);
    if (answer.timedOut) return { hung: true };
    return messagesOf(answer).find((message) => message.id === requestId) ?? { error: { message: `no answer: ${answer.status ?? answer.error}` } };
  };
  return {
    id,
    request,
    /** A built-in child's tool through execute_child_tool: { ok, text } or { hung: true }. */
    async tool(server, tool, args = {}) {
      return resultOf(
        await request("tools/call", { name: "execute_child_tool", arguments: { server_id: server, tool_name: tool, arguments: args } }),
      );
    },
    async meta(name, args = {}) {
      return resultOf(await request("tools/call", { name, arguments: args }));
    },
    async read(uri) {
      const answer = await request("resources/read", { uri });
      if (answer.hung) return answer;
      return { ok: answer.result !== undefined, text: JSON.stringify(answer.result ?? answer.error) };
    },
    /** Ends the session (DELETE), as a client that is done does. */
    close: () => rawRequest(port, { method: "DELETE", headers }, ms),
  };
}

function resultOf(answer) {
  if (answer.hung) return answer;
  const text = (answer.result?.content ?? []).map((part) => part.text ?? "").join("");
  return { ok: answer.result !== undefined && !answer.result.isError, text: text || JSON.stringify(answer.error ?? "") };
}

const MODERN = "2026-07-28";
const EVERYTHING = { sampling: {}, elicitation: {}, roots: {} };

/**
 * One 2026-07-28 tools/call of a child's tool through execute_child_tool, sent with `token` by a client that
 * declares every capability and always calls itself the same; `retry` carries requestState and inputResponses.
 * Resolves with the final JSON-RPC message, or `{ hung: true }`.
 */
export async function modernTool(port, token, server, tool, args, retry = {}, ms = 30_000) {
  const params = {
    name: "execute_child_tool",
    arguments: { server_id: server, tool_name: tool, arguments: args },
    ...retry,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": EVERYTHING,
      "io.modelcontextprotocol/clientInfo": { name: "gaggle-chaos", version: "0" },
    },
  };
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "execute_child_tool",
    authorization: `Bearer ${token}`,
  };
  const answer = await rawRequest(port, { headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }) }, ms);
  if (answer.timedOut) return { hung: true };
  return messagesOf(answer).at(-1) ?? { error: { message: `no answer: ${answer.status ?? answer.error}` } };
}
