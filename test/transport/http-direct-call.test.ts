// A 2025 session's POST of one tools/call is answered by gaggle without the SDK's Streamable HTTP server transport:
// the bytes on the wire are those the SDK's transport writes for the same request and the same messages, so an SDK
// whose answer changes fails here. Everything else a session sends still goes to the SDK.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { directToolCall } from "../../src/transport/request-stream.js";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";

const PROTOCOL = "2025-11-25";

/** One HTTP/1.1 exchange on a connection of its own: the response's bytes as they came, up to the end of its body. */
async function exchange(port: number, head: Record<string, string>, body: string, extra: string[] = [], target = "/mcp"): Promise<string> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  const lines = [`POST ${target} HTTP/1.1`, `host: 127.0.0.1:${port}`, ...Object.entries(head).map(([name, value]) => `${name}: ${value}`), ...extra];
  socket.write(`${lines.join("\r\n")}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  let bytes = Buffer.alloc(0);
  for await (const chunk of socket) {
    bytes = Buffer.concat([bytes, chunk as Buffer]);
    const end = bytes.indexOf("\r\n\r\n");
    if (end < 0) continue;
    const length = /\r\ncontent-length: (\d+)\r\n/i.exec(bytes.subarray(0, end + 2).toString("latin1"));
    const complete = length ? bytes.length - (end + 4) >= Number(length[1]) : bytes.toString("latin1").endsWith("\r\n0\r\n\r\n");
    if (complete) break;
  }
  socket.destroy();
  return bytes.toString("utf8");
}

/** The exchange's bytes with its Date header's value, which no two responses share, blanked. */
const undated = (raw: string) => raw.replace(/\r\nDate: [^\r]*\r\n/, "\r\nDate: -\r\n");

/** The JSON-RPC messages of an SSE response, in order. */
function events(raw: string): JSONRPCMessage[] {
  return [...raw.matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1]!) as JSONRPCMessage);
}

const headers = (session: string) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-session-id": session,
  "mcp-protocol-version": PROTOCOL,
});

/**
 * The SDK's own transport in a plain Node server, holding the session `session`: it answers initialize, and each
 * tools/call with the messages `script` gives for its id, a few milliseconds apart (a child's answer comes later
 * than the transport first reads its stream), or `atOnce`, as the request is taken (an answer gaggle makes itself).
 */
async function sdkServer(session: string, script: (id: RequestId) => JSONRPCMessage[], atOnce: boolean): Promise<Server> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => session });
  transport.onmessage = (message) => {
    if (!("method" in message) || !("id" in message)) return;
    if (message.method === "initialize") {
      void transport.send({
        jsonrpc: "2.0",
        id: message.id,
        result: { protocolVersion: PROTOCOL, capabilities: {}, serverInfo: { name: "s", version: "0" } },
      });
      return;
    }
    script(message.id).forEach((sent, i) => {
      const related = "result" in sent || "error" in sent ? undefined : { relatedRequestId: message.id };
      if (atOnce) void transport.send(sent, related);
      else setTimeout(() => void transport.send(sent, related), 20 * (i + 1));
    });
  };
  await transport.start();
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    req.on("end", () => void transport.handleRequest(req, res, JSON.parse(text)));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const init = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "t", version: "0" } },
  };
  const { port } = server.address() as AddressInfo;
  await exchange(port, { "content-type": "application/json", accept: "application/json, text/event-stream" }, JSON.stringify(init));
  return server;
}

let gaggle: HttpGaggle;
let session: string;

/**
 * A free port whose Host header the SDK's Node adapter takes without parsing it (10000 to 59999), so that the SDK's
 * answer compared with gaggle's is the one its adapter gives most hosts.
 */
async function plainPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    const probe = createServer().listen(port, "127.0.0.1");
    const free = await Promise.race([once(probe, "listening").then(() => true), once(probe, "error").then(() => false)]);
    if (free) {
      await new Promise((resolve) => probe.close(resolve));
      return port;
    }
  }
}

beforeAll(async () => {
  const config = ['[gateway]\nexpose = "tools"\n', NO_BUILT_INS, fixtureChild("echo", "echo.mjs")].join("\n");
  gaggle = await startHttpGaggle(config, { listen: `127.0.0.1:${await plainPort()}` });
  const init = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "t", version: "0" } },
  };
  const response = await fetch(gaggle.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(init),
  });
  session = response.headers.get("mcp-session-id")!;
  await response.text();
  const initialized = await fetch(gaggle.url, {
    method: "POST",
    headers: headers(session),
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  expect(initialized.status).toBe(202);
});

afterAll(async () => {
  await gaggle?.stop();
});

/** gaggle's answer to `call`, and the SDK transport's to the same bytes with the same messages. */
async function bothAnswers(call: Record<string, unknown>, atOnce = false): Promise<{ ours: string; sdk: string }> {
  const body = JSON.stringify(call);
  const ours = await exchange(gaggle.port, headers(session), body);
  const messages = events(ours);
  const server = await sdkServer(session, () => messages, atOnce);
  try {
    const sdk = await exchange((server.address() as AddressInfo).port, headers(session), body);
    return { ours, sdk };
  } finally {
    server.close();
  }
}

describe("a 2025 session's POST of one tools/call", () => {
  it("is answered with the bytes the SDK's transport writes: status, headers, the answer's event, the chunked end", async () => {
    const { ours, sdk } = await bothAnswers({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "echo__echo", arguments: { text: 'café \n"x"' } },
    });
    expect(ours).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(events(ours)).toEqual([{ jsonrpc: "2.0", id: 7, result: expect.objectContaining({ content: expect.any(Array) }) as unknown }]);
    expect(JSON.stringify(events(ours)[0])).toContain('café \\n\\"x\\"');
    expect(ours).not.toContain("isError");
    expect(ours).toContain("\r\nTransfer-Encoding: chunked\r\n");
    expect(undated(ours)).toBe(undated(sdk));
  });

  it("carries the call's progress on its stream before the answer, as the SDK writes them", async () => {
    const call = {
      jsonrpc: "2.0",
      id: "p",
      method: "tools/call",
      params: { name: "echo__progress", arguments: { steps: 2, delay_ms: 10 }, _meta: { progressToken: "tok" } },
    };
    const { ours, sdk } = await bothAnswers(call);
    const sent = events(ours);
    expect(sent.map((message) => ("method" in message ? message.method : "answer"))).toEqual([
      "notifications/progress",
      "notifications/progress",
      "answer",
    ]);
    expect(undated(ours)).toBe(undated(sdk));
  });

  it("answered at once (an unknown tool's error) is sent whole with a content-length, as the SDK sends it", async () => {
    const { ours, sdk } = await bothAnswers({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "no_such_tool", arguments: {} } }, true);
    expect(ours).toMatch(/\r\ncontent-length: \d+\r\n/);
    expect(events(ours)).toEqual([
      { jsonrpc: "2.0", id: 9, error: expect.objectContaining({ message: expect.stringContaining("no_such_tool") }) as unknown },
    ]);
    expect(undated(ours)).toBe(undated(sdk));
  });

  it("with a protocol version the SDK does not take is refused by the SDK, as before", async () => {
    const call = JSON.stringify({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "echo__echo", arguments: { message: "x" } } });
    const raw = await exchange(gaggle.port, { ...headers(session), "mcp-protocol-version": "1999-01-01" }, call);
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain("Unsupported protocol version: 1999-01-01");
  });

  it("with its content type sent twice is refused by the SDK, which reads both, as before", async () => {
    const call = JSON.stringify({ jsonrpc: "2.0", id: 12, method: "tools/call", params: { name: "echo__echo", arguments: { text: "x" } } });
    const raw = await exchange(gaggle.port, headers(session), call, ["content-type: application/json"]);
    expect(raw).toMatch(/^HTTP\/1\.1 415 /);
  });

  it("sent with a query is answered by the SDK, with the bytes of the direct answer", async () => {
    const call = JSON.stringify({ jsonrpc: "2.0", id: 13, method: "tools/call", params: { name: "no_such_tool", arguments: {} } });
    const direct = await exchange(gaggle.port, headers(session), call);
    const sdk = await exchange(gaggle.port, headers(session), call, [], "/mcp?via=sdk");
    expect(direct).toMatch(/^HTTP\/1\.1 200 /);
    expect(undated(direct)).toBe(undated(sdk));
  });

  it("naming a session that is not there is refused, as before", async () => {
    const call = JSON.stringify({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "echo__echo", arguments: { message: "x" } } });
    const raw = await exchange(gaggle.port, headers("00000000-0000-0000-0000-000000000000"), call);
    expect(raw).toMatch(/^HTTP\/1\.1 404 /);
  });
});

describe("which POSTs are answered without the SDK", () => {
  const call = { jsonrpc: "2.0" as const, id: 1, method: "tools/call", params: { name: "echo__echo", arguments: {} } };
  const post = (host: string) =>
    ({
      url: "/mcp",
      headers: { host, accept: "application/json, text/event-stream", "content-type": "application/json" },
      rawHeaders: ["host", host, "content-type", "application/json"],
    }) as unknown as IncomingMessage;

  it("those whose Host the SDK's adapter accepts, parsed or not: any port, any case", () => {
    for (const host of ["127.0.0.1:8080", "localhost:61234", "127.0.0.1:65535", "Example.COM:3000", "[::1]:60001", "localhost"]) {
      expect({ host, direct: directToolCall(post(host), "/mcp", call) !== undefined }).toEqual({ host, direct: true });
    }
  });

  it("not those whose Host it refuses, which the SDK answers", () => {
    for (const host of ["a b", "127.0.0.1:99999", "exa%mple.com", ""]) {
      expect({ host, direct: directToolCall(post(host), "/mcp", call) !== undefined }).toEqual({ host, direct: false });
    }
  });
});
