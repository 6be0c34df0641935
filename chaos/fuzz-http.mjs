// Attack: the fuzzed JSON-RPC of chaos/lib/json-rpc-fuzz.mjs as POST bodies to gaggle's Streamable HTTP (--http 0),
// most in an open session, some as 2026-07-28 requests, some with bad headers, methods or paths. gaggle must not
// crash and must still open a session and serve a call after it all; requests with a readable id that got no
// JSON-RPC answer carrying it are counted and shown, not failed on.
import { randomUUID } from "node:crypto";
import { count, byCount, exitText, logText, mib, orphanText } from "./lib/figures.mjs";
import { FUZZ_CHILD_CONFIG } from "./fuzz-stdio.mjs";
import { startHttp, workDir, writeConfig } from "./lib/gaggle.mjs";
import { MCP_HEADERS, messagesOf, openSession, rawRequest } from "./lib/http.mjs";
import { FUZZ_CHILD, answerExpected, fuzzLines } from "./lib/json-rpc-fuzz.mjs";
import { newMark, orphansOf, watchMemory } from "./lib/procs.mjs";
import { seeded } from "./lib/random.mjs";

export const title = "fuzzed JSON-RPC over HTTP";

const IN_FLIGHT = 8;

/** How a fuzzed body is sent: the session's headers mostly, else one thing wrong with the request around it. */
function shapeOf(r, session, bodyText) {
  const inSession = { ...MCP_HEADERS, "mcp-session-id": session };
  const method = answerExpected(bodyText)?.method;
  const variants = [
    [60, () => ["session", { headers: inSession }]],
    [
      10,
      () => [
        "2026-07-28 headers",
        {
          headers: {
            ...MCP_HEADERS,
            "mcp-protocol-version": r.pick(["2026-07-28", "2026-07-28", "2099-01-01", "garbage"]),
            ...(typeof method === "string" && /^[\w/]+$/.test(method) && { "mcp-method": r.chance(0.8) ? method : "tools/list" }),
          },
        },
      ],
    ],
    [3, () => ["content-type text/plain", { headers: { ...inSession, "content-type": "text/plain" } }]],
    [3, () => ["no accept", { headers: { ...inSession, accept: undefined } }]],
    [2, () => ["accept text/html", { headers: { ...inSession, accept: "text/html" } }]],
    [3, () => ["unknown session", { headers: { ...inSession, "mcp-session-id": r.pick([randomUUID(), "nope", "s".repeat(8000)]) } }]],
    [3, () => ["no session", { headers: MCP_HEADERS }]],
    // Node's HTTP parser refuses it (431) before gaggle sees it: no JSON-RPC answer is owed.
    [1, () => ["huge header", { headers: { ...inSession, "x-junk": "y".repeat(20_000) } }, { owed: false }]],
    [2, () => ["foreign host", { headers: { ...inSession, host: "evil.example" } }]],
    [2, () => ["foreign origin", { headers: { ...inSession, origin: "http://evil.example" } }]],
    [1, () => ["stray bearer token", { headers: { ...inSession, authorization: "Bearer junk" } }]],
    [2, () => ["old protocol version header", { headers: { ...inSession, "mcp-protocol-version": "1999-01-01" } }]],
    [3, () => ["chunked", { headers: inSession, chunked: true }]],
    [
      2,
      () => [
        "other method",
        {
          method: r.pick(["GET", "PUT", "DELETE", "OPTIONS", "PATCH", "HEAD"]),
          headers: { ...MCP_HEADERS, "mcp-session-id": r.pick(["nope", randomUUID()]) },
        },
      ],
    ],
    [
      2,
      () => [
        "other path",
        { path: r.pick(["/mcp/", "/MCP", "/mcp?x=1", "/healthz", `/${"p".repeat(5000)}`, "/members/abc/mcp", "/%zz"]), headers: inSession },
      ],
    ],
    [
      1,
      () => [
        "body over the limit",
        { headers: inSession, body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"${"b".repeat(5 * 1024 * 1024)}"}}` },
      ],
    ],
  ];
  const [name, shape, { owed = true } = {}] = variants[r.weighted(variants.map(([weight]) => weight))][1]();
  const headers = Object.fromEntries(Object.entries(shape.headers).filter(([, value]) => value !== undefined));
  // A request is owed an answer when its body is the fuzzed request, sent by POST.
  return { name, ...shape, headers, owed: owed && shape.body === undefined && (shape.method ?? "POST") === "POST" };
}

export async function run({ scale }) {
  const total = Math.max(300, Math.round(3000 * scale));
  const r = seeded(5);
  const dir = workDir("fuzz-http");
  const mark = newMark("fuzz-http");
  const config = writeConfig(dir.path, "fuzz.toml", { children: FUZZ_CHILD_CONFIG });
  const gaggle = await startHttp({ config, mark, dir: dir.path });
  const memory = watchMemory(gaggle.pid);
  const session = await openSession(gaggle.port);
  const generator = fuzzLines(r, { idPrefix: "h" });
  const statuses = new Map();
  const shapes = new Map();
  const failures = new Map();
  const unanswered = new Map();
  const unansweredSamples = new Map();
  const nullAnswered = new Map();
  let expected = 0;
  let answered = 0;
  let timedOut = 0;
  let next = 0;
  const worker = async () => {
    while (next < total && gaggle.alive()) {
      const { kind, data } = generator.next(next++);
      const text = typeof data === "string" ? data : data.toString("utf8");
      const shape = shapeOf(r, session, text);
      count(shapes, shape.name);
      const body = shape.body ?? data;
      const outcome = await rawRequest(gaggle.port, { ...shape, body: ["GET", "HEAD"].includes(shape.method) ? undefined : body });
      if (outcome.timedOut) timedOut++;
      if (outcome.error) count(failures, outcome.error);
      if (outcome.status) count(statuses, outcome.status);
      const wanted = shape.owed ? answerExpected(text) : undefined;
      if (!wanted) continue;
      expected++;
      const messages = outcome.status ? messagesOf(outcome) : [];
      const status = outcome.timedOut ? "no whole answer in 15 s" : (outcome.status ?? outcome.error);
      if (messages.some((message) => message?.id === wanted.id && ("result" in message || "error" in message))) answered++;
      else if (messages.some((message) => message?.id === null)) count(nullAnswered, `${shape.name} ${status}`);
      else {
        count(unanswered, `${kind}, ${shape.name} -> ${status}`);
        if (!unansweredSamples.has(kind)) unansweredSamples.set(kind, `${shape.name}, ${status}: ${text.slice(0, 140)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  // After it all, a new client opens a session and is served.
  let servesAfter;
  try {
    const fresh = await openSession(gaggle.port);
    const call = {
      jsonrpc: "2.0",
      id: "after",
      method: "tools/call",
      params: { name: "execute_child_tool", arguments: { server_id: FUZZ_CHILD, tool_name: "echo", arguments: { text: "still here" } } },
    };
    const answer = await rawRequest(gaggle.port, { headers: { ...MCP_HEADERS, "mcp-session-id": fresh }, body: JSON.stringify(call) });
    servesAfter = messagesOf(answer).some((message) => message.id === "after" && message.result?.content?.[0]?.text === "still here");
  } catch {
    servesAfter = false;
  }
  const peakKiB = memory.stop();
  const alive = gaggle.alive();
  const exit = await gaggle.stop("SIGTERM");
  const orphans = await orphansOf(mark, 5000);
  dir.remove();
  const unansweredTotal = [...unanswered.values()].reduce((sum, n) => sum + n, 0);
  const nullTotal = [...nullAnswered.values()].reduce((sum, n) => sum + n, 0);
  return {
    title,
    figures: [
      ["requests", `${total} (${byCount(shapes)})`],
      ["HTTP statuses", `${byCount(statuses)}${failures.size > 0 ? `; connection errors: ${byCount(failures)}` : ""}`],
      ["no whole answer in 15 s", timedOut],
      ["should get an answer", `${expected} (a POST whose body is a request with a readable id)`],
      ["answered under its id", answered],
      ["answered with id null", nullTotal === 0 ? 0 : `${nullTotal} (${byCount(nullAnswered)})`],
      ["unanswered", unansweredTotal === 0 ? 0 : `${unansweredTotal} (${byCount(unanswered)})`],
      ...[...unansweredSamples].map(([kind, sample]) => [`  e.g. ${kind}`, sample]),
      ["gaggle's log", logText(gaggle.log)],
      ["served after", servesAfter ? "yes" : "no"],
      ["gaggle exit", exitText(exit)],
      ["orphans", orphanText(orphans)],
      ["peak RSS of gaggle", mib(peakKiB)],
    ],
    mustBeZero: {
      "gaggle died": alive ? 0 : 1,
      "not served after": servesAfter ? 0 : 1,
      "did not exit": exit.hungOnExit ? 1 : 0,
      orphans: orphans.length,
    },
    peakKiB,
    orphans: orphans.length,
    unanswered: unansweredTotal,
  };
}
