// The HTTP listener's limits, through a real gaggle with two named tokens: sessions and connections capped per
// token and in all, connections that never finish their headers closed, and the other token served meanwhile.
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { NO_BUILT_INS } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { errorMessage, INITIALIZE, postMcp, rawRequest } from "../helpers/raw-http.js";

const ANN = "ann-token-4Kd9sQ2vXp";
const BOB = "bob-token-8Jw3nR6yTc";
const as = (token: string) => ({ authorization: `Bearer ${token}` });

let gaggle: HttpGaggle;
beforeAll(async () => {
  gaggle = await startHttpGaggle(
    `${NO_BUILT_INS}[gateway]\nauth_tokens = { ann = "${ANN}", bob = "${BOB}" }\nmax_sessions = 3\nmax_sessions_per_principal = 2\n` +
      "max_connections = 40\nmax_connections_per_principal = 4\nheaders_timeout_ms = 1000\n",
  );
});
afterAll(() => gaggle.stop());

/** Connections the other side closed. */
const closedByGaggle = new WeakSet<Socket>();

/** A connection held open by the test; resolves once it is connected. */
async function openSocket(): Promise<Socket> {
  const socket = connect(gaggle.port, "127.0.0.1");
  socket.on("close", () => closedByGaggle.add(socket));
  socket.on("error", () => {});
  socket.on("data", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  return socket;
}

describe("sessions", () => {
  it("caps each token's sessions and all of them, answering 503 with the limit, and frees a place when one ends", async () => {
    const opened: string[] = [];
    for (let i = 0; i < 2; i++) {
      const answer = await postMcp(gaggle.port, INITIALIZE, as(ANN));
      expect(answer.status).toBe(200);
      opened.push(String(answer.headers["mcp-session-id"]));
    }
    const third = await postMcp(gaggle.port, INITIALIZE, as(ANN));
    expect(third.status).toBe(503);
    expect(errorMessage(third)).toBe(
      'too many sessions for token "ann": it holds 2 (gateway.max_sessions_per_principal); end sessions it no longer uses (DELETE /mcp with their Mcp-Session-Id), or raise the limit',
    );
    expect((await postMcp(gaggle.port, INITIALIZE, as(BOB))).status).toBe(200);
    const over = await postMcp(gaggle.port, INITIALIZE, as(BOB));
    expect(over.status).toBe(503);
    expect(errorMessage(over)).toBe("too many sessions: 3 are open (gateway.max_sessions); retry once some end, or raise the limit");
    const ended = await rawRequest(gaggle.port, { method: "DELETE", headers: { ...as(ANN), "mcp-session-id": opened[0]! } });
    expect(ended.status).toBe(200);
    await until(
      () => postMcp(gaggle.port, INITIALIZE, as(ANN)),
      (answer) => answer.status === 200,
    );
  });
});

describe("connections", () => {
  it("closes a connection that never finishes its headers", async () => {
    const halfOpen = await Promise.all(Array.from({ length: 10 }, () => openSocket()));
    for (const socket of halfOpen) socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ANN}\r\n`);
    await until(
      () => halfOpen.filter((socket) => !closedByGaggle.has(socket)).length,
      (open) => open === 0,
    );
  });

  it("caps the connections one token holds, and the other token is still served", async () => {
    const request = (token: string) => `GET /healthz-not HTTP/1.1\r\nHost: 127.0.0.1:${gaggle.port}\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const sockets: Socket[] = [];
    const answers: string[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const socket = await openSocket();
        sockets.push(socket);
        const answer = new Promise<string>((resolve) => socket.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8"))));
        socket.write(request(ANN));
        answers.push(await answer);
      }
      expect(answers.slice(0, 4).map((answer) => answer.slice(0, 12))).toEqual(Array(4).fill("HTTP/1.1 404"));
      expect(answers[4]).toMatch(/^HTTP\/1\.1 503/);
      expect(answers[4]).toContain('too many connections for token \\"ann\\": it holds 4 (gateway.max_connections_per_principal)');
      const bob = await openSocket();
      sockets.push(bob);
      const answer = new Promise<string>((resolve) => bob.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8"))));
      bob.write(request(BOB));
      expect(await answer).toMatch(/^HTTP\/1\.1 404/);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});
