// Attack: a client that stops reading gaggle's stdout while a child logs heavily (fixtures/chatty.mjs). Measures
// what gaggle then holds (its peak RSS against its RSS before), whether the child is held back, and that every
// call is answered once the client reads again. Nothing here fails on memory: it is the figure to watch.
import { setTimeout as delay } from "node:timers/promises";
import { CallTally, exitText, mib, orphanText } from "./lib/figures.mjs";
import { startStdio, workDir, writeConfig } from "./lib/gaggle.mjs";
import { carrying, newMark, orphansOf, watchMemory } from "./lib/procs.mjs";
import { TICKS_PER_SECOND, cpuTicksOf, memoryOf } from "../bench/procs.mjs";

export const title = "a slow client while a child logs heavily";

/** The client stops reading until gaggle's RSS has not grown for this long (or the hold's limit passes). */
const STEADY_MS = 3000;

export async function run({ scale }) {
  const calls = 8;
  const perCall = { count: Math.max(500, Math.round(6000 * scale)), bytes: 2000 };
  const holdMs = Math.max(6000, 30_000 * scale);
  const dir = workDir("slow");
  const mark = newMark("slow");
  const config = writeConfig(dir.path, "slow.toml", {
    children: { chatty: { script: "chatty.mjs", extra: [`concurrency = ${calls}`, "timeout_ms = 600000"] } },
  });
  const gaggle = await startStdio({ config, mark, dir: dir.path }).initialize();
  const tally = new CallTally();
  const chatter = (count) =>
    gaggle.call(
      "execute_child_tool",
      { server_id: "chatty", tool_name: "chatter", arguments: { count, bytes: perCall.bytes } },
      { timeoutMs: 300_000 },
    );
  await gaggle.request("logging/setLevel", { level: "debug" }, { timeoutMs: 30_000 });
  tally.record(await chatter(10), "chatter warm-up");
  const logsReach = gaggle.output.notifications >= 10;
  const before = memoryOf(gaggle.pid).rssKiB;
  const memory = watchMemory(gaggle.pid, 100);

  gaggle.child.stdout.pause();
  const childPid = () => carrying(mark).find(({ command }) => command.includes("chatty.mjs"))?.pid;
  const answers = Array.from({ length: calls }, () => chatter(perCall.count).then((answer) => tally.record(answer, "chatter")));
  let childPeakKiB = 0;
  let last = { at: Date.now(), kib: 0 };
  const holdStart = Date.now();
  while (Date.now() - holdStart < holdMs && Date.now() - last.at < STEADY_MS) {
    await delay(200);
    const now = memory.peakKiB();
    if (now > last.kib + 1024) last = { at: Date.now(), kib: now };
    const pid = childPid();
    if (pid) childPeakKiB = Math.max(childPeakKiB, memoryOf(pid).peakKiB);
  }
  const heldSeconds = (Date.now() - holdStart) / 1000;
  const readBefore = gaggle.output.bytes;
  gaggle.child.stdout.resume();
  const drainStart = Date.now();
  await Promise.all(answers);
  const drainSeconds = (Date.now() - drainStart) / 1000;
  // gaggle should be idle once every answer is in; CPU spent now is work the backlog left behind.
  const ticks = cpuTicksOf(gaggle.pid);
  await delay(2000);
  const busySeconds = (cpuTicksOf(gaggle.pid) - ticks) / TICKS_PER_SECOND;
  const peakKiB = memory.stop();
  const sentLogs = calls * perCall.count;
  const alive = gaggle.alive();
  // Measured rather than judged: how long gaggle takes to go once its client closes stdin after such a backlog.
  const exit = await gaggle.stop("stdin", 120_000);
  const orphans = await orphansOf(mark, 5000);
  dir.remove();
  return {
    title,
    figures: [
      ["load", `${calls} calls, each logging ${perCall.count} messages of ${perCall.bytes} bytes (${mib((sentLogs * perCall.bytes) / 1024)} in all)`],
      ["client stopped reading", `for ${heldSeconds.toFixed(0)} s (until gaggle's RSS held still ${STEADY_MS / 1000} s, at most ${holdMs / 1000} s)`],
      ...tally.figures(),
      [
        "log messages reached the client",
        `${gaggle.output.notifications - 10} of ${sentLogs}${logsReach ? "" : " (none came before the client stopped)"}`,
      ],
      [
        "client read",
        `${mib(readBefore / 1024)} before it stopped, ${mib((gaggle.output.bytes - readBefore) / 1024)} after, over ${drainSeconds.toFixed(1)} s`,
      ],
      ["RSS of gaggle", `${mib(before)} before, peak ${mib(peakKiB)} while the client did not read`],
      ["peak RSS of the child", mib(childPeakKiB)],
      ["gaggle's CPU after", `${busySeconds.toFixed(2)} s of CPU in the 2 s after the last answer`],
      ["gaggle exit", exitText(exit)],
      ["orphans", orphanText(orphans)],
    ],
    mustBeZero: { hung: tally.hung, orphans: orphans.length, "gaggle died": alive ? 0 : 1 },
    tally,
    peakKiB,
    orphans: orphans.length,
  };
}
