// Attack: the HTTP listener flooded: connections that never finish their headers, past max_connections, must all be
// closed at headers_timeout_ms, after which the other principal is served; one principal's sessions past its cap
// must be refused with 503 naming the limit while the other principal opens one and works.
import { connect } from "node:net";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { exitText, orphanText } from "./lib/figures.mjs";
import { workDir } from "./lib/gaggle.mjs";
import { MCP_HEADERS, rawRequest } from "./lib/http.mjs";
import { TOKENS, startTwoPrincipals } from "./lib/http-gaggle.mjs";
import { openTokenSession } from "./lib/mcp-http.mjs";
import { newMark, orphansOf, watchMemory } from "./lib/procs.mjs";

export const title = "a principal flooding the HTTP listener while another works";

const CAPS = { connections: 200, perPrincipal: 16, sessions: 60, sessionsPerPrincipal: 20 };

/** A connection that sends part of its headers and nothing more; resolves once the server closed it, with how long that took. */
function halfOpen(port, closedAt) {
  const socket = connect(port, "127.0.0.1", () => socket.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  const opened = Date.now();
  socket.on("error", () => {});
  // Read: a socket whose answer (408) is never read never reports its close.
  socket.resume();
  socket.on("close", () => closedAt.push(Date.now() - opened));
  return socket;
}

export async function run({ scale }) {
  const dir = workDir("flood");
  const root = join(dir.path, "root");
  mkdirSync(root);
  const mark = newMark("flood");
  const extra = [
    `max_connections = ${CAPS.connections}`,
    `max_connections_per_principal = ${CAPS.perPrincipal}`,
    `max_sessions = ${CAPS.sessions}`,
    `max_sessions_per_principal = ${CAPS.sessionsPerPrincipal}`,
    "headers_timeout_ms = 1000",
  ];
  // The caps are [gateway] keys: they go before the children's tables.
  const gaggle = await startTwoPrincipals({ dir: dir.path, root, mark, gatewayExtra: extra });
  const memory = watchMemory(gaggle.pid);
  const ann = await openTokenSession(gaggle.port, TOKENS.ann);
  let annFailed = 0;
  let hung = 0;
  const annWorks = async () => {
    const answer = await ann.tool("workspace", "Bash", { command: "echo ann" });
    if (answer.hung) hung++;
    else if (!answer.ok || !answer.text.startsWith("ann")) annFailed++;
  };

  // Half-open connections, many past the cap: each is closed at headers_timeout_ms, and Ann is served meanwhile.
  const closedAt = [];
  const sockets = Array.from({ length: Math.max(CAPS.connections + 50, Math.round(scale * 1500)) }, () => halfOpen(gaggle.port, closedAt));
  const deadline = Date.now() + 15_000;
  while (closedAt.length < sockets.length && Date.now() < deadline) await delay(100);
  const leftOpen = sockets.length - closedAt.length;
  for (const socket of sockets) socket.destroy();
  // Once they are closed, Ann is served again.
  for (let call = 0; call < 5; call++) await annWorks();

  // Bob's sessions past his cap: refused with 503, the refusal naming the limit; Ann still opens one and works.
  const bobAuth = { ...MCP_HEADERS, authorization: `Bearer ${TOKENS.bob}` };
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "flood", version: "0" } },
  });
  const tries = Math.max(CAPS.sessionsPerPrincipal + 10, Math.round(scale * 300));
  const statuses = new Map();
  let unnamedRefusals = 0;
  for (let round = 0; round < tries; round += 10) {
    const answers = await Promise.all(Array.from({ length: 10 }, () => rawRequest(gaggle.port, { headers: bobAuth, body: initialize })));
    for (const answer of answers) {
      if (answer.timedOut) hung++;
      statuses.set(answer.status ?? answer.error, (statuses.get(answer.status ?? answer.error) ?? 0) + 1);
      if (answer.status === 503 && !answer.body.includes("gateway.max_sessions_per_principal")) unnamedRefusals++;
    }
  }
  const annSession = await openTokenSession(gaggle.port, TOKENS.ann).catch(() => undefined);
  if (!annSession) annFailed++;
  for (let call = 0; call < 5; call++) await annWorks();

  const alive = gaggle.alive();
  await ann.close();
  await annSession?.close();
  const peakKiB = memory.stop();
  const exit = await gaggle.stop("SIGTERM");
  const orphans = await orphansOf(mark, 5000);
  dir.remove();
  const slowest = Math.max(0, ...closedAt);
  return {
    title,
    figures: [
      [
        "half-open connections",
        `${sockets.length} (cap ${CAPS.connections}): ${closedAt.length} closed by gaggle, the last after ${slowest} ms; ${leftOpen} left open`,
      ],
      [
        "Bob's sessions",
        `${tries} initializes (cap ${CAPS.sessionsPerPrincipal}): ${[...statuses].map(([status, n]) => `${status} x${n}`).join(", ")}`,
      ],
      ["503s not naming the limit", unnamedRefusals],
      ["Ann's calls refused", `${annFailed} (after the half-open ones closed, and beside Bob's sessions)`],
      ["hung", hung],
      ["gaggle exit", exitText(exit)],
      ["orphans", orphanText(orphans)],
    ],
    mustBeZero: {
      "half-open connections left open": leftOpen,
      "sessions past the cap": Math.max(0, (statuses.get(200) ?? 0) - CAPS.sessionsPerPrincipal),
      "refusals not naming the limit": unnamedRefusals,
      "other principal refused": annFailed,
      hung,
      orphans: orphans.length,
      "gaggle died": alive ? 0 : 1,
    },
    peakKiB,
    orphans: orphans.length,
  };
}
