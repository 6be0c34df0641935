// Owns the comparison of two builds on the call goals, as the goals are judged: bench/run.mjs run alternately for the
// build before a change (another checkout's dist/cli.js) and this checkout's, each run's ratios read from its JSON, and
// the median of each ratio over the runs printed with its range, the before build's median beside it.
//
//   node bench/compare.mjs --before ../before/dist/cli.js [--runs 5] [--keep DIR]   (after npm run build in both)
//
// Alternating the builds run by run puts a slow moment of the machine on both. --keep keeps each run's JSON in DIR.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { median } from "./measure.mjs";
import * as procs from "./procs.mjs";

const { values } = parseArgs({
  options: { before: { type: "string" }, runs: { type: "string", default: "5" }, keep: { type: "string" }, help: { type: "boolean", short: "h" } },
});
const runs = Number(values.runs);
if (values.help || values.before === undefined || !(runs >= 1)) {
  process.stdout.write("usage: node bench/compare.mjs --before OTHER/dist/cli.js [--runs N] [--keep DIR]\n");
  process.exit(values.help ? 0 : 2);
}
const before = resolve(values.before);
for (const cli of [before, procs.GAGGLE_CLI]) if (!existsSync(cli)) throw new Error(`${cli} is missing; run npm run build in its checkout`);

/** Each measure as a ratio of one run's report: what the goals judge, and the baselines' own. */
const MEASURES = [
  ["one core, sequential p50 / relay", (r) => r.oneCore.gaggle.warm.p50Ms / r.oneCore.relay.warm.p50Ms],
  ["one core, CPU per call / relay", (r) => r.oneCore.gaggle.cpuUsPerCall / r.oneCore.relay.cpuUsPerCall],
  ["64 in flight / relay", (r) => r.throughput.deep.gaggle.callsPerSecond / r.throughput.deep.relay.callsPerSecond],
  ["one core, p50 / least gateway", (r) => r.oneCore.gaggle.warm.p50Ms / r.oneCore.least.warm.p50Ms],
  ["one core, CPU per call / least gateway", (r) => r.oneCore.gaggle.cpuUsPerCall / r.oneCore.least.cpuUsPerCall],
  ["64 in flight / least gateway", (r) => r.throughput.deep.gaggle.callsPerSecond / r.throughput.deep.least.callsPerSecond],
  ["CPU per call at 64 in flight (µs)", (r) => r.throughput.deep.gaggle.cpuUsPerCall],
  ["one core, CPU per call (µs)", (r) => r.oneCore.gaggle.cpuUsPerCall],
  ["least gateway: one core, p50 / relay", (r) => r.oneCore.least.warm.p50Ms / r.oneCore.relay.warm.p50Ms],
  ["least gateway: one core, CPU / relay", (r) => r.oneCore.least.cpuUsPerCall / r.oneCore.relay.cpuUsPerCall],
  ["least gateway: 64 in flight / relay", (r) => r.throughput.deep.least.callsPerSecond / r.throughput.deep.relay.callsPerSecond],
];

const dir = values.keep ? resolve(values.keep) : procs.makeTempDir();
mkdirSync(dir, { recursive: true });
const reports = { before: [], after: [] };
for (let run = 1; run <= runs; run++) {
  for (const [build, cli] of [
    ["before", before],
    ["after", procs.GAGGLE_CLI],
  ]) {
    const json = join(dir, `${build}-${run}.json`);
    process.stdout.write(`run ${run} of ${runs}, ${build}: ${cli}\n`);
    const ran = spawnSync(process.execPath, [join(procs.ROOT, "bench", "run.mjs"), "--json", json], {
      env: { ...process.env, GAGGLE_BENCH_CLI: cli },
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (ran.status !== 0) throw new Error(`bench/run.mjs failed for ${build} (exit ${ran.status})`);
    reports[build].push(JSON.parse(readFileSync(json, "utf8")));
  }
}
if (!values.keep) procs.removeDir(dir);

const fixed = (x) => (x >= 10 ? x.toFixed(1) : x.toFixed(2));
process.stdout.write(`\nmedians of ${runs} runs each, alternating (range); the before build's median last\n`);
for (const [name, of] of MEASURES) {
  const [after, was] = [reports.after.map(of), reports.before.map(of)];
  const range = `${fixed(Math.min(...after))} to ${fixed(Math.max(...after))}`;
  process.stdout.write(`  ${name.padEnd(40)} ${fixed(median(after)).padStart(6)} (${range}); before ${fixed(median(was))}\n`);
}
