import { spawn } from "node:child_process";
import { connect, createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { textOf, writeConfig } from "../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { CLI, fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { connectClient, errorMessage, INITIALIZE, MCP_POST_HEADERS, postMcp, rawRequest, TOOLS_LIST } from "../helpers/raw-http.js";

// Only ever loopback: a gaggle bound to 0.0.0.0 is still only spoken to at 127.0.0.1.
const CONFIG_TOKEN = "cfg-token-7Qx2mV9pLk";
const ENV_TOKEN = "env-token-3Rz8nB1wHj";
const echo = fixtureChild("echo", "echo.mjs");

let open: HttpGaggle;
let withConfigToken: HttpGaggle;
let withEnvToken: HttpGaggle;

beforeAll(async () => {
  [open, withConfigToken, withEnvToken] = await Promise.all([
    startHttpGaggle(
      `[gateway]\nmax_body_bytes = 4096\nallowed_hosts = ["gaggle.example", "proxy.example:8443"]\nallowed_origins = ["https://app.example"]\n\n${echo}`,
    ),
    startHttpGaggle(`[gateway]\nauth_token = "${CONFIG_TOKEN}"\n\n${echo}`, { listen: "0.0.0.0:0", args: ["--log-level", "trace"] }),
    startHttpGaggle(echo, { env: { GAGGLE_AUTH_TOKEN: ENV_TOKEN }, args: ["--log-level", "trace"] }),
  ]);
});
afterAll(async () => {
  await Promise.allSettled([open, withConfigToken, withEnvToken].map((gaggle) => gaggle?.stop()));
});

/** Runs gaggle to its exit (killed after 10 s), with no GAGGLE_AUTH_TOKEN from the test's own environment. */
function runToExit(configText: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "GAGGLE_AUTH_TOKEN"));
  const child = spawn(process.execPath, [CLI, "--config", writeConfig(configText), ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`gaggle ${args.join(" ")} did not exit within 10s; stderr:\n${stderr}`));
    }, 10_000);
    // "close", not "exit": it comes once stderr has been read to its end.
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

const call = async (url: string, headers: Record<string, string>) => {
  const { client } = await connectClient(url, { headers });
  try {
    return textOf(
      (await client.callTool({
        name: "execute_child_tool",
        arguments: { server_id: "echo", tool_name: "echo", arguments: { text: "through" } },
      })) as CallToolResult,
    );
  } finally {
    await client.close();
  }
};

describe("listening", () => {
  it("serves /mcp on 127.0.0.1 when given only a port, and says where on stderr", async () => {
    expect(open.url).toBe(`http://127.0.0.1:${open.port}/mcp`);
    expect(open.stderr()).toContain(`gaggle: serving MCP at http://127.0.0.1:${open.port}/mcp\n`);
    expect(await call(open.url, {})).toBe("through");
  });

  it("refuses to bind a non-loopback address without a token, naming both places to set one", async () => {
    // No built-in children: their info lines would come before the refusal.
    const { code, stderr } = await runToExit(`${NO_BUILT_INS}\n${echo}`, ["--http", "0.0.0.0:0"]);
    expect(code).toBe(1);
    expect(stderr).toContain("refusing to serve HTTP on 0.0.0.0 without a bearer token");
    expect(stderr).toContain("gateway.auth_token");
    expect(stderr).toContain("GAGGLE_AUTH_TOKEN");
    expect(stderr).not.toContain("serving MCP at");
    expect(stderr).toBe(
      "gaggle: refusing to serve HTTP on 0.0.0.0 without a bearer token: set gateway.auth_token (or gateway.auth_tokens) in the config or GAGGLE_AUTH_TOKEN in the environment, or bind to 127.0.0.1\n",
    );
  });

  it("refuses a port already in use in one line saying what to do, with no stack trace, and exits 1", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const { code, stderr } = await runToExit(`${NO_BUILT_INS}\n${echo}`, ["--http", String(port)]);
      expect(code).toBe(1);
      expect(stderr).toBe(
        `gaggle: cannot serve HTTP on 127.0.0.1:${port}: the port is in use; stop what listens there, or give --http another port (0 picks a free one)\n`,
      );
    } finally {
      taken.close();
    }
  });

  it("binds a non-loopback address when a token is set", () => {
    expect(withConfigToken.url).toBe(`http://0.0.0.0:${withConfigToken.port}/mcp`);
  });
});

describe("bearer token", () => {
  const cases = [
    { source: "gateway.auth_token", gaggle: () => withConfigToken, token: CONFIG_TOKEN },
    { source: "GAGGLE_AUTH_TOKEN", gaggle: () => withEnvToken, token: ENV_TOKEN },
  ];

  it.each(cases)("from $source: a missing or wrong token gets 401 on every /mcp request", async ({ gaggle, token }) => {
    const { port } = gaggle();
    const wrong: Array<Record<string, string>> = [
      {},
      { authorization: `Bearer ${token}x` },
      { authorization: `Bearer ${token.slice(0, -1)}` },
      { authorization: token },
    ];
    for (const headers of wrong) {
      const response = await postMcp(port, INITIALIZE, headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(errorMessage(response)).toContain("bearer token");
      // RFC 6750: the scheme to use, and for a token sent, that it was not taken.
      expect(response.headers["www-authenticate"]).toBe(
        headers.authorization ? 'Bearer realm="gaggle", error="invalid_token"' : 'Bearer realm="gaggle"',
      );
    }
    expect((await rawRequest(port, { method: "GET", headers: { accept: "text/event-stream" } })).status).toBe(401);
    expect((await rawRequest(port, { method: "DELETE", headers: { "mcp-session-id": "anything" } })).status).toBe(401);
    await expect(connectClient(`http://127.0.0.1:${port}/mcp`)).rejects.toThrow();
  });

  it.each(cases)("from $source: the right token opens a session that works", async ({ gaggle, token }) => {
    expect(await call(`http://127.0.0.1:${gaggle().port}/mcp`, { authorization: `Bearer ${token}` })).toBe("through");
  });

  it.each(cases)("from $source: the auth scheme is matched without regard to case (RFC 7235)", async ({ gaggle, token }) => {
    expect((await postMcp(gaggle().port, INITIALIZE, { authorization: `bearer ${token}` })).status).toBe(200);
  });

  it("never writes either token to stderr, even at --log-level trace", async () => {
    // Everything above has run against these two: sessions, calls, refusals. Stopping flushes the shutdown logs too.
    await Promise.all([withConfigToken.stop(), withEnvToken.stop()]);
    for (const gaggle of [withConfigToken, withEnvToken]) {
      const stderr = gaggle.stderr();
      expect(stderr).toContain("client session opened");
      expect(stderr).not.toContain(CONFIG_TOKEN);
      expect(stderr).not.toContain(ENV_TOKEN);
    }
  });
});

describe("Host and Origin", () => {
  const initialize = (headers: Record<string, string>) => postMcp(open.port, INITIALIZE, headers);

  it("refuses a Host not in the allowlist with 421", async () => {
    for (const host of ["evil.example", `evil.example:${open.port}`, "localhost:1", "proxy.example:9999", "gaggle.example.evil"]) {
      const response = await initialize({ host });
      expect(response.status, host).toBe(421);
      expect(errorMessage(response)).toContain("gateway.allowed_hosts");
    }
  });

  it("accepts loopback names on its port and the configured allowed_hosts", async () => {
    for (const host of [`127.0.0.1:${open.port}`, `localhost:${open.port}`, `LOCALHOST:${open.port}`, "gaggle.example", "proxy.example:8443"]) {
      const response = await initialize({ host });
      expect(response.status, host).toBe(200);
      expect(response.headers["mcp-session-id"]).toEqual(expect.any(String));
    }
  });

  it("refuses an Origin not in the allowlist with 403", async () => {
    for (const origin of ["http://evil.example", "null", `http://127.0.0.1:1`, "https://app.example.evil", "http://app.example"]) {
      const response = await initialize({ origin });
      expect(response.status, origin).toBe(403);
      expect(errorMessage(response)).toContain("gateway.allowed_origins");
    }
  });

  it("accepts loopback origins on its port and the configured allowed_origins", async () => {
    for (const origin of [`http://127.0.0.1:${open.port}`, `http://localhost:${open.port}`, "https://app.example"]) {
      expect((await initialize({ origin })).status, origin).toBe(200);
    }
  });
});

describe("request bodies and sessions", () => {
  const padded = (bytes: number) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(bytes) } });

  it("refuses a body over max_body_bytes with 413 (declared by Content-Length)", async () => {
    const response = await postMcp(open.port, padded(5000));
    expect(response.status).toBe(413);
    expect(errorMessage(response)).toContain("gateway.max_body_bytes");
  });

  it("refuses a body over max_body_bytes with 413 (chunked, no Content-Length)", async () => {
    const body = padded(8000);
    const chunks = Array.from({ length: Math.ceil(body.length / 1024) }, (_, i) => body.slice(i * 1024, (i + 1) * 1024));
    const response = await rawRequest(open.port, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      chunks,
    });
    expect(response.status).toBe(413);
  });

  // Node's fetch sends the whole body before it reads the answer: a connection closed with body still unread
  // resets, and the reset takes the 413 with it.
  it("answers 413 to Node's fetch sending 5 MB, declared or chunked, every time", async () => {
    const body = padded(5 * 1024 * 1024);
    const chunked = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          const bytes = new TextEncoder().encode(body);
          for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024));
          controller.close();
        },
      });
    for (let attempt = 0; attempt < 8; attempt++) {
      for (const [how, sent] of [
        ["declared", body],
        ["chunked", chunked()],
      ] as const) {
        const response = await fetch(`http://127.0.0.1:${open.port}/mcp`, {
          method: "POST",
          headers: MCP_POST_HEADERS,
          body: sent,
          duplex: "half",
        } as RequestInit);
        expect(response.status, `${how}, attempt ${attempt}`).toBe(413);
        expect(((await response.json()) as { error: { message: string } }).error.message).toContain("gateway.max_body_bytes");
      }
    }
  });

  // A client that asks for the connection to close (node:http with agent: false, HTTP/1.0, curl -H 'Connection:
  // close') gets an answer Node's server marks as the last: it used to destroy the socket once that was written,
  // body unread, and the client's write failed with EPIPE, most times before it had read the 413.
  it("answers 413 to a raw client that asks to close the connection and writes 5 MB before it reads, every time", async () => {
    const body = padded(5 * 1024 * 1024);
    const head =
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${open.port}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    for (let attempt = 0; attempt < 4; attempt++) {
      const socket = connect({ port: open.port, host: "127.0.0.1" });
      let answer = "";
      let failure: string | undefined;
      socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
      socket.on("error", (error: NodeJS.ErrnoException) => (failure = error.code));
      socket.write(head);
      socket.end(body);
      await new Promise((resolve) => socket.once("close", resolve));
      expect({ failure, answer: answer.split("\r\n")[0] }, `attempt ${attempt}`).toEqual({
        failure: undefined,
        answer: "HTTP/1.1 413 Payload Too Large",
      });
      expect(answer.toLowerCase()).toContain("connection: close");
    }
  });

  it("still closes the connection of a refused body whose client goes on sending", async () => {
    // Half-open: the client's end stays open after gaggle's closes, as one that only writes would.
    const socket = connect({ port: open.port, host: "127.0.0.1", allowHalfOpen: true });
    socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${open.port}\r\nContent-Type: application/json\r\nContent-Length: 1000000000000\r\n\r\n`);
    const sending = setInterval(() => socket.write("x".repeat(1024)), 50);
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
    socket.on("error", () => {});
    const started = Date.now();
    // Cut, the client's next write fails (EPIPE): "close" is what tells that the connection is gone.
    await new Promise((resolve) => socket.once("close", resolve));
    clearInterval(sending);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("accepts a body under max_body_bytes", async () => {
    expect((await postMcp(open.port, INITIALIZE)).status).toBe(200);
  });

  it("refuses a body that is not JSON with 400 and -32700 (Parse error)", async () => {
    const response = await postMcp(open.port, '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ id: null, error: { code: -32700 } });
    expect(errorMessage(response)).toContain("not JSON");
  });

  it("refuses JSON that is not a JSON-RPC message with 400 and -32600 (Invalid Request), saying why, in a session or not", async () => {
    const session = (await postMcp(open.port, INITIALIZE)).headers["mcp-session-id"] as string;
    const cases: Array<[string, unknown, string]> = [
      ['{"foo":1}', null, '"jsonrpc" must be "2.0", found nothing'],
      ["5", null, "expected a JSON-RPC message object, found a JSON number"],
      [
        '{"jsonrpc":"2.0","id":7,"method":"ping","extra":1}',
        7,
        'unexpected member "extra": a request or notification has only "jsonrpc", "id", "method" and "params"',
      ],
      ['[{"jsonrpc":"2.0","id":"b","method":7}]', "b", '"method" must be a string, found 7'],
    ];
    for (const headers of [{}, { "mcp-session-id": session }] as Array<Record<string, string>>) {
      for (const [body, id, message] of cases) {
        const response = await postMcp(open.port, body, headers);
        expect(response.status, body).toBe(400);
        expect(JSON.parse(response.body), body).toEqual({ jsonrpc: "2.0", id, error: { code: -32600, message } });
      }
    }
  });

  it("refuses a request other than initialize without a session with 400", async () => {
    const response = await postMcp(open.port, TOOLS_LIST);
    expect(response.status).toBe(400);
    expect(errorMessage(response)).toContain("must be initialize");
  });

  it("answers a request with an unknown session id with 404", async () => {
    const response = await postMcp(open.port, TOOLS_LIST, { "mcp-session-id": "00000000-0000-4000-8000-000000000000" });
    expect(response.status).toBe(404);
    expect(errorMessage(response)).toContain("session not found");
  });
});

describe("GET /healthz", () => {
  it("answers 200 {status: ok} and nothing about the config", async () => {
    const response = await rawRequest(open.port, { path: "/healthz" });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: "ok" });
  });

  it("needs no token where /mcp does", async () => {
    const gaggle = await startHttpGaggle(`[gateway]\nauth_token = "${CONFIG_TOKEN}"\n\n${echo}`);
    try {
      const response = await rawRequest(gaggle.port, { path: "/healthz" });
      expect(response.status).toBe(200);
      expect(JSON.parse(response.body)).toEqual({ status: "ok" });
      expect((await postMcp(gaggle.port, INITIALIZE)).status).toBe(401);
    } finally {
      await gaggle.stop();
    }
  });
});
