// Attack: a stdio child SIGKILLed again and again while many calls are in flight. Every call must settle, answered
// or failed with a code (SERVER_FAILED for the calls the kill cut off); none may hang, and nothing may outlive gaggle.
import { setTimeout as delay } from "node:timers/promises";
import { CallTally, exitText, mib, orphanText } from "./lib/figures.mjs";
import { startStdio, workDir, writeConfig } from "./lib/gaggle.mjs";
import { newMark, orphansOf, watchMemory } from "./lib/procs.mjs";
import { seeded } from "./lib/random.mjs";

const TIMEOUT_MS = 20_000;
/** Past the child's timeout, a call still unanswered is hung: gaggle should have failed it with TIMEOUT by then. */
const HUNG_AFTER_MS = TIMEOUT_MS + 10_000;

export const title = "crash under load";

export async function run({ scale }) {
  const kills = Math.max(3, Math.round(90 * scale));
  const inFlight = 64;
  const random = seeded(1);
  const dir = workDir("crash");
  const mark = newMark("crash");
  const config = writeConfig(dir.path, "crash.toml", {
    children: { target: { script: "echo.mjs", extra: [`concurrency = ${inFlight}`, `timeout_ms = ${TIMEOUT_MS}`] } },
  });
  const gaggle = await startStdio({ config, mark, dir: dir.path }).initialize();
  const memory = watchMemory(gaggle.pid);
  const tally = new CallTally();
  let answeredAt = 0;
  let stopping = false;

  const oneCall = async (i) => {
    const [tool, args] = random.pick([
      ["echo", { text: `call ${i}` }],
      ["sleep", { ms: random.int(300) }],
      ["lines", { count: 200 }],
      ["add", { a: i, b: 1 }],
    ]);
    const answer = await gaggle.call("execute_child_tool", { server_id: "target", tool_name: tool, arguments: args }, { timeoutMs: HUNG_AFTER_MS });
    tally.record(answer, `${tool} ${JSON.stringify(args)}`);
    if (answer.result && !answer.result.isError) answeredAt = Date.now();
  };
  let next = 0;
  const workers = Array.from({ length: inFlight }, async () => {
    while (!stopping && gaggle.alive()) await oneCall(next++);
  });

  const childPid = async () => {
    const answer = await gaggle.call("get_child_status", { server_id: "target" }, { timeoutMs: 10_000 });
    if (!answer.result || answer.result.isError) return undefined;
    const status = JSON.parse(answer.result.content[0].text);
    return status.status === "running" ? status.pid : undefined;
  };
  let killed = 0;
  let duringStart = 0;
  let last;
  const started = Date.now();
  while (killed < kills && gaggle.alive()) {
    const pid = await childPid();
    if (pid === undefined || pid === last) {
      await delay(20);
      continue;
    }
    // Most kills land once calls are being answered again; some land on a child just started.
    const atOnce = random.chance(0.15);
    if (!atOnce) {
      const since = Date.now();
      while (answeredAt < since && Date.now() - since < 5000) await delay(10);
      await delay(50 + random.int(400));
    } else duringStart++;
    try {
      process.kill(pid, "SIGKILL");
      killed++;
    } catch {
      // it died some other way; pick the next
    }
    last = pid;
  }
  stopping = true;
  await Promise.all(workers);
  const seconds = (Date.now() - started) / 1000;
  // After the storm, the child is started again and serves as before.
  const after = await gaggle.call(
    "execute_child_tool",
    { server_id: "target", tool_name: "echo", arguments: { text: "after" } },
    { timeoutMs: 30_000 },
  );
  const servesAfter = after.result?.content?.[0]?.text === "after";
  const peakKiB = memory.stop();
  const alive = gaggle.alive();
  const exit = await gaggle.stop("stdin");
  const orphans = await orphansOf(mark, 5000);
  dir.remove();
  return {
    title,
    figures: [
      ["kills", `${killed} over ${seconds.toFixed(0)} s (${duringStart} right after a restart), ${inFlight} calls in flight`],
      ...tally.figures(),
      ["served after", servesAfter ? "yes" : `no: ${JSON.stringify(after).slice(0, 200)}`],
      ["gaggle exit", exitText(exit)],
      ["orphans", orphanText(orphans)],
      ["peak RSS of gaggle", mib(peakKiB)],
    ],
    mustBeZero: {
      hung: tally.hung,
      orphans: orphans.length,
      "did not exit": exit.hungOnExit ? 1 : 0,
      "gaggle died": alive ? 0 : 1,
      "not served after": servesAfter ? 0 : 1,
    },
    tally,
    peakKiB,
    orphans: orphans.length,
  };
}
