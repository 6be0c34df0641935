// Attack: children that flood gaggle with bogus progress and answers (noisy-protocol), lie about ids (lying-ids),
// write non-JSON to stdout (garbage-stdout) and ignore SIGTERM with a grandchild that does too (stubborn), all
// at once, round after round; each round's gaggle ends a different way (stdin closed, SIGTERM, SIGINT,
// SIGKILL). Calls must still be answered, and nothing any child started may outlive gaggle.
import { CallTally, count, byCount, mib, orphanText } from "./lib/figures.mjs";
import { startStdio, workDir, writeConfig } from "./lib/gaggle.mjs";
import { newMark, orphansOf, watchMemory } from "./lib/procs.mjs";

export const title = "children that flood, lie about ids, or ignore SIGTERM";

const ENDINGS = ["stdin", "SIGTERM", "SIGKILL", "SIGINT"];
const CHILDREN = {
  noisy: { script: "noisy-protocol.mjs", extra: ["concurrency = 4"] },
  liar: { script: "lying-ids.mjs", extra: ["concurrency = 4"] },
  // The same child for the calls only gaggle's timeout can end, so that they hold up none of the others.
  liar_mute: { script: "lying-ids.mjs", extra: ["timeout_ms = 2000"] },
  garbage: { script: "garbage-stdout.mjs" },
  stubborn: { script: "stubborn.mjs", extra: ['env = { STUBBORN_LIFETIME_MS = "120000" }'] },
};

export async function run({ scale }) {
  const rounds = Math.max(2, Math.round(6 * scale));
  const dir = workDir("children");
  const config = writeConfig(dir.path, "children.toml", { children: CHILDREN });
  const tally = new CallTally();
  const wrong = new Map();
  const orphans = [];
  const endings = new Map();
  let peakKiB = 0;
  let floods = 0;
  let died = 0;
  let notExited = 0;
  for (let round = 0; round < rounds; round++) {
    const mark = newMark("children");
    const gaggle = await startStdio({ config, mark, dir: dir.path }).initialize();
    const memory = watchMemory(gaggle.pid);
    const call = async (server, tool, args, expected) => {
      const answer = tally.record(
        await gaggle.call("execute_child_tool", { server_id: server, tool_name: tool, arguments: args }, { timeoutMs: 30_000 }),
        `${server}.${tool}`,
      );
      const text = answer.result && !answer.result.isError ? answer.result.content?.[0]?.text : undefined;
      if (expected !== undefined && text !== undefined && text !== expected) count(wrong, `${server}.${tool}: ${text.slice(0, 60)}`);
    };
    const many = (n, make) => Promise.all(Array.from({ length: n }, (_, i) => make(i)));
    const floodCount = Math.max(1000, Math.round(20_000 * scale));
    floods += 4 * floodCount;
    await Promise.all([
      many(4, () => call("noisy", "flood", { count: floodCount }, `flooded ${floodCount}`)),
      many(20, (i) => call("noisy", "echo_back", { text: `n${i}` }, `n${i}`)),
      many(30, (i) => call("liar", "echo_back", { text: `l${i}` }, `l${i}`)),
      many(2, () => call("liar_mute", "never_right", {})),
      many(10, (i) => call("garbage", "echo", { text: `g${i}` }, `g${i}`)),
      many(10, () => call("garbage", "garble", {}, "still alive")),
      (async () => {
        await many(20, (i) => call("stubborn", "echo", { text: `s${i}` }, `s${i}`));
        // Closing the stubborn child: SIGTERM is ignored by it and its grandchild, so only the SIGKILL after the grace ends them.
        tally.record(await gaggle.call("close_child_session", { server_id: "stubborn" }, { timeoutMs: 30_000 }), "close stubborn");
        await many(10, (i) => call("stubborn", "echo", { text: `t${i}` }, `t${i}`));
      })(),
    ]);
    peakKiB = Math.max(peakKiB, memory.stop());
    if (!gaggle.alive()) died++;
    const ending = ENDINGS[round % ENDINGS.length];
    const exit = await gaggle.stop(ending);
    if (exit.hungOnExit) notExited++;
    count(endings, `${ending} (${exit.hungOnExit ? "did not exit: SIGKILLed" : exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`})`);
    orphans.push(...(await orphansOf(mark, 5000)));
  }
  dir.remove();
  return {
    title,
    figures: [
      [
        "rounds",
        `${rounds}, each with ${floods / rounds} bogus progress notifications and answers, lies about ids, non-JSON lines and a child that ignores SIGTERM`,
      ],
      ...tally.figures(),
      ["lies taken as answers", wrong.size === 0 ? 0 : byCount(wrong)],
      ["gaggle endings", byCount(endings)],
      ["orphans", orphanText(orphans)],
      ["peak RSS of gaggle", mib(peakKiB)],
    ],
    mustBeZero: { hung: tally.hung, orphans: orphans.length, "gaggle died": died, "did not exit": notExited, "lies taken as answers": wrong.size },
    tally,
    peakKiB,
    orphans: orphans.length,
  };
}
