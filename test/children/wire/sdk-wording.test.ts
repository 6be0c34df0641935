// The SDK's HTTP client transports, against a server that refuses and breaks what they send: the failures they report
// only in words are read as gaggle reads them (src/children/wire/sdk-wording.ts). An SDK that words one otherwise
// fails here.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionLost, neverReached, streamBroken } from "../../../src/children/wire/remote-transport.js";
import { refusedGetStream, ssePostStatus } from "../../../src/children/wire/sdk-wording.js";
import { until } from "../../helpers/poll.js";

/** What the server does with each request, by method and path; the default opens an event stream and holds it. */
let answer: (request: IncomingMessage, response: ServerResponse) => void;
let server: Server;
let origin: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    answer(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const ping = (id: number) => ({ jsonrpc: "2.0" as const, id, method: "ping" });
const failureOf = (sent: Promise<unknown>) =>
  sent.then(
    () => undefined,
    (error: unknown) => error,
  );

describe("the Streamable HTTP transport", () => {
  it("reports a refused standalone GET stream as a 404 that is no lost session", async () => {
    answer = (request, response) => void response.writeHead(request.method === "GET" ? 404 : 202).end();
    const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`));
    const errors: unknown[] = [];
    transport.onerror = (error) => errors.push(error);
    await transport.start();
    // notifications/initialized is what opens the standalone GET stream.
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await until(
      () => errors.length,
      (count) => count > 0,
    );
    const refusal = errors[0];
    expect(refusal).toBeInstanceOf(StreamableHTTPError);
    expect((refusal as StreamableHTTPError).code).toBe(404);
    expect(refusedGetStream(refusal as StreamableHTTPError)).toBe(true);
    expect(connectionLost(refusal)).toBe(false);
    await transport.close();
  });

  it("reports a POST answered 404 as a lost session the request never reached", async () => {
    answer = (_, response) => void response.writeHead(404).end("no such session");
    const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`));
    await transport.start();
    const failure = await failureOf(transport.send(ping(1)));
    expect(failure).toBeInstanceOf(StreamableHTTPError);
    expect(refusedGetStream(failure as StreamableHTTPError)).toBe(false);
    expect([connectionLost(failure), neverReached(failure)]).toEqual([true, true]);
    await transport.close();
  });

  it("reports a response stream the server breaks as a broken stream, not a lost session", async () => {
    let stream: ServerResponse | undefined;
    answer = (_, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(": open\n\n");
      stream = response;
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`));
    const errors: unknown[] = [];
    transport.onerror = (error) => errors.push(error);
    await transport.start();
    await transport.send(ping(2));
    await until(() => stream, Boolean);
    stream!.destroy();
    await until(
      () => errors.length,
      (count) => count > 0,
    );
    expect([streamBroken(errors[0]), connectionLost(errors[0])]).toEqual([true, false]);
    await transport.close();
  });
});

describe("the legacy SSE transport", () => {
  /** The event stream names /messages as where to POST; each POST is answered with `status`. */
  const serving = (status: number) => (request: IncomingMessage, response: ServerResponse) => {
    if (request.method === "GET") {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("event: endpoint\ndata: /messages\n\n");
    } else response.writeHead(status).end("refused");
  };

  it("reports a POST answered 404 with the status only in its words, read as a lost session never reached", async () => {
    answer = serving(404);
    const transport = new SSEClientTransport(new URL(`${origin}/sse`));
    await transport.start();
    const failure = await failureOf(transport.send(ping(3)));
    expect(failure).toBeInstanceOf(Error);
    expect(ssePostStatus(failure)).toBe(404);
    expect([connectionLost(failure), neverReached(failure)]).toEqual([true, true]);
    await transport.close();
  });

  it("reports a POST answered 500 as neither", async () => {
    answer = serving(500);
    const transport = new SSEClientTransport(new URL(`${origin}/sse`));
    await transport.start();
    const failure = await failureOf(transport.send(ping(4)));
    expect(ssePostStatus(failure)).toBe(500);
    expect([connectionLost(failure), neverReached(failure)]).toEqual([false, false]);
    await transport.close();
  });
});
