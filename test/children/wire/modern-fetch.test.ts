// A 2026-07-28 request cancelled over HTTP: its response stream is closed, and the SDK transport reading it reports
// no fault, while a stream the server breaks is still reported.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modernFetch } from "../../../src/children/wire/modern-fetch.js";
import { streamBroken } from "../../../src/children/wire/remote-transport.js";
import { envelope } from "../../helpers/modern-http.js";
import { until } from "../../helpers/poll.js";

/** A server that opens an event stream for each POSTed request and never answers on it. */
let server: Server;
let url: URL;
const streams: Array<{ response: ServerResponse; closed: boolean }> = [];

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write(": open\n\n");
    const stream = { response, closed: false };
    response.on("close", () => (stream.closed = true));
    streams.push(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const call = (id: number) => ({ jsonrpc: "2.0" as const, id, method: "tools/call", params: { name: "wait", arguments: {}, _meta: envelope() } });

describe("modernFetch under the SDK's Streamable HTTP transport", () => {
  it("closes a cancelled request's response stream, and the transport reports nothing", async () => {
    const transport = new StreamableHTTPClientTransport(url, { fetch: modernFetch() });
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    await transport.start();
    const before = streams.length;
    await transport.send(call(1));
    await until(
      () => streams.length,
      (count) => count > before,
    );
    const stream = streams.at(-1)!;

    await transport.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } });
    // The client's side of the stream ends before the server sees its connection close.
    await until(() => stream.closed, Boolean);
    expect(errors).toEqual([]);
    await transport.close();
  });

  it("leaves a stream the server breaks to be reported as the transport reports it", async () => {
    const transport = new StreamableHTTPClientTransport(url, { fetch: modernFetch() });
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    await transport.start();
    const before = streams.length;
    await transport.send(call(2));
    await until(
      () => streams.length,
      (count) => count > before,
    );

    streams.at(-1)!.response.destroy();
    await until(
      () => errors.length,
      (count) => count > 0,
    );
    expect(streamBroken(errors[0])).toBe(true);
    await transport.close();
  });
});
