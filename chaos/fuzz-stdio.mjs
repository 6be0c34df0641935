// Attack: thousands of fuzzed JSON-RPC lines on gaggle's stdin (chaos/lib/json-rpc-fuzz.mjs), a few before the
// handshake. gaggle must not crash, must go on answering (a ping every so often must come back), must write
// nothing but JSON-RPC on stdout, and must still serve a call after it all. Requests with a readable id that got
// no answer are counted and shown, not failed on.
import { setTimeout as delay } from "node:timers/promises";
import { count, byCount, exitText, logText, mib, orphanText } from "./lib/figures.mjs";
import { startStdio, workDir, writeConfig } from "./lib/gaggle.mjs";
import { FUZZ_CHILD, fuzzLines, owedAnswers } from "./lib/json-rpc-fuzz.mjs";
import { newMark, orphansOf, watchMemory } from "./lib/procs.mjs";
import { seeded } from "./lib/random.mjs";

export const title = "fuzzed JSON-RPC on stdin";

/** The echo child's timeout: a fuzzed call that sleeps or loops ends by then. */
export const FUZZ_TIMEOUT_MS = 3000;
export const FUZZ_CHILD_CONFIG = {
  [FUZZ_CHILD]: { script: "echo.mjs", extra: ["concurrency = 4", `timeout_ms = ${FUZZ_TIMEOUT_MS}`, `max_timeout_ms = ${FUZZ_TIMEOUT_MS}`] },
};
const PING_EVERY = 250;
const MAX_LINE_CHARS = 64 * 1024 * 1024;

export async function run({ scale }) {
  const total = Math.max(500, Math.round(6000 * scale));
  const dir = workDir("fuzz-stdio");
  const mark = newMark("fuzz-stdio");
  const config = writeConfig(dir.path, "fuzz.toml", { children: FUZZ_CHILD_CONFIG });
  const gaggle = startStdio({ config, mark, dir: dir.path });
  const memory = watchMemory(gaggle.pid);
  const generator = fuzzLines(seeded(4));
  const lines = [];
  const kinds = new Map();
  const send = async (i) => {
    const line = generator.next(i);
    lines.push(line);
    count(kinds, line.kind);
    await gaggle.write(typeof line.data === "string" ? `${line.data}\n` : Buffer.concat([line.data, Buffer.from("\n")]));
  };
  let pings = 0;
  let stalls = 0;
  const before = Math.round(total / 50);
  for (let i = 0; i < before; i++) await send(i);
  await gaggle.initialize();
  for (let i = before; i < total && gaggle.alive(); i++) {
    await send(i);
    if (i % PING_EVERY === 0) {
      pings++;
      const pong = await gaggle.request("ping", {}, { id: `ctl-${i}`, timeoutMs: 30_000 });
      if (pong.hung) stalls++;
    }
  }
  // A line past the limit gaggle reads, once per full run: it is cut and answered as unreadable.
  if (scale >= 1 && gaggle.alive())
    await gaggle.write(`{"jsonrpc":"2.0","id":"too-long","method":"ping","params":{"x":"${"l".repeat(MAX_LINE_CHARS)}"}}\n`);

  const owed = owedAnswers(lines);
  // Every call ends within the child's timeout; a little more for the answers to come through.
  const deadline = Date.now() + FUZZ_TIMEOUT_MS + 2000;
  const unanswered = () => [...owed].filter(([id]) => !gaggle.answers.has(id));
  while (unanswered().length > 0 && Date.now() < deadline && gaggle.alive()) await delay(200);
  const missing = unanswered();
  const after = await gaggle.call(
    "execute_child_tool",
    { server_id: FUZZ_CHILD, tool_name: "echo", arguments: { text: "still here" } },
    { id: "ctl-after", timeoutMs: 30_000 },
  );
  const servesAfter = after.result?.content?.[0]?.text === "still here";
  const peakKiB = memory.stop();
  const alive = gaggle.alive();
  const exit = await gaggle.stop("stdin");
  const orphans = await orphansOf(mark, 5000);
  dir.remove();
  const missingKinds = new Map();
  for (const [, { kind }] of missing) count(missingKinds, kind);
  return {
    title,
    figures: [
      ["lines sent", `${lines.length} (${byCount(kinds)})${scale >= 1 ? ", and one line over 64 MiB" : ""}`],
      ["should get an answer", `${owed.size} (requests with a readable id, not cancelled, ids not repeated)`],
      ["answered", owed.size - missing.length],
      ["unanswered", missing.length === 0 ? 0 : `${missing.length} (${byCount(missingKinds)})`],
      ...firstOfEachKind(missing).map(([id, { kind, data }]) => [
        `  e.g. ${kind}`,
        `id ${JSON.stringify(id).slice(0, 40)}: ${String(data).slice(0, 160)}`,
      ]),
      ["answers with id null", gaggle.answers.get(null) ?? 0],
      ["pings unanswered", `${stalls} of ${pings}`],
      ["stdout lines not JSON", gaggle.output.notJson.length === 0 ? 0 : `${gaggle.output.notJson.length}: ${gaggle.output.notJson.join(" | ")}`],
      ["gaggle's log", logText(gaggle.log)],
      ["served after", servesAfter ? "yes" : `no: ${JSON.stringify(after).slice(0, 200)}`],
      ["gaggle exit", exitText(exit)],
      ["orphans", orphanText(orphans)],
      ["peak RSS of gaggle", mib(peakKiB)],
    ],
    mustBeZero: {
      "gaggle died": alive ? 0 : 1,
      "pings unanswered": stalls,
      "stdout lines not JSON": gaggle.output.notJson.length,
      "not served after": servesAfter ? 0 : 1,
      "did not exit": exit.hungOnExit ? 1 : 0,
      orphans: orphans.length,
    },
    peakKiB,
    orphans: orphans.length,
    unanswered: missing.length,
  };
}

/** The first unanswered line of each kind, so that one kind does not hide the others. */
export function firstOfEachKind(missing) {
  const first = new Map();
  for (const entry of missing) if (!first.has(entry[1].kind)) first.set(entry[1].kind, entry);
  return [...first.values()];
}
