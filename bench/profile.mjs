// Owns the per-call time profile: where each hop's CPU goes while it passes echo calls, in microseconds a call, by
// kind of work (the kernel's system calls and scheduling, V8's JSON parser and serializer, the collector, promises,
// the hop's own JavaScript, Node's, V8's other builtins, Node's C++ and libc). Each hop (the bare relay, the least
// gateway, gaggle) is sampled with Linux perf while the calls run, every thread, the kernel included; the shares
// perf finds are scaled by the hop's CPU a call measured without perf (the median of five rounds, the hops taking
// turns), which perf's own interruptions would inflate. Where bench/instructions.mjs counts instructions, which do not move with the machine,
// this shows time, which the kernel's share and the caches move: one call at a time, every process on one core (as
// the one-core goals are judged); with --depth N, N calls in flight on every core.
//
//   node bench/profile.mjs [--depth N] [--calls N] [--mode meta|proxy] [--gaggle CLI] [--rows N]
//   (after npm run build; needs perf, from Debian's linux-perf, and root or kernel.perf_event_paranoid <= 1 for the
//   kernel's share; --rows N lists each hop's N costliest symbols too)
import { spawn, spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { echoCaller, gatewayEcho, interleave, latencySamples, median, throughput } from "./measure.mjs";
import * as procs from "./procs.mjs";

const { values } = parseArgs({
  options: {
    depth: { type: "string", default: "1" },
    calls: { type: "string", default: "6000" },
    mode: { type: "string", default: "meta" },
    gaggle: { type: "string", default: procs.GAGGLE_CLI },
    rows: { type: "string", default: "0" },
    help: { type: "boolean", short: "h" },
  },
});
const depth = Number(values.depth);
const calls = Number(values.calls);
const rows = Number(values.rows);
if (values.help || !(depth >= 1) || !(calls >= 100) || !(rows >= 0) || !["meta", "proxy"].includes(values.mode)) {
  process.stdout.write("usage: node bench/profile.mjs [--depth N] [--calls N] [--mode meta|proxy] [--gaggle CLI] [--rows N]\n");
  process.exit(values.help ? 0 : 2);
}
const perf = spawnSync("perf", ["--version"], { encoding: "utf8" });
if (perf.error || perf.status !== 0) {
  process.stderr.write("bench/profile.mjs needs Linux perf (Debian: apt-get install linux-perf)\n");
  process.exit(2);
}

/** perf's sampling rate: often enough for a few thousand samples a hop, seldom enough not to be the hop's main cost. */
const SAMPLES_PER_SECOND = 10_000;
const WARM_CALLS = 8000;
/** Rounds of `calls` calls each hop's CPU a call is the median of. */
const CPU_ROUNDS = 5;

/**
 * The kinds of work, each by the symbols it runs, in the order they are tried; a symbol none names is "other". The
 * kernel's share is every sample in kernel code, whatever the symbol: the reads, writes and waits of the hop's pipes,
 * and the switches to and from it.
 */
const KINDS = [
  ["kernel: system calls, scheduling", (dso) => dso === "[kernel.kallsyms]"],
  [
    "JSON parse and stringify (V8)",
    (_, sym) => /JsonParser|JsonStringifier|Json(Parse|Stringify)|StringTable|TransitionArray|InternalizeString/.test(sym),
  ],
  ["garbage collection (V8)", (_, sym) => /Heap|Scaveng|Sweep|Marking|MarkCompact|Evacuat|RecordWrite|Minor|Semi|Remembered/.test(sym)],
  ["promises and microtasks (V8)", (_, sym) => /Promise|Microtask|AsyncFunction|Await|ResumeGenerator/.test(sym)],
  ["the hop's JavaScript", (dso, sym) => dso.startsWith("[JIT]") && !/ node:/.test(sym)],
  ["Node's JavaScript", (dso) => dso.startsWith("[JIT]")],
  ["other V8 builtins", (_, sym) => sym.startsWith("Builtins_")],
  ["Node and libuv (C++), libc", (dso, sym) => /^node::|^uv_|^uv__/.test(sym) || dso.startsWith("libc")],
];
const OTHER = "other (V8's runtime and C++)";
const KIND_NAMES = [...KINDS.map(([kind]) => kind), OTHER];

const dir = procs.makeTempDir();
const pinProblem = depth === 1 ? procs.pinToOneCore() : undefined;
if (pinProblem) process.stderr.write(`profile: every process on one core is not possible (${pinProblem}): measuring unpinned\n`);
const node = process.execPath;
const jitNames = ["--perf-basic-prof"];
// The child's concurrency is the bench's (bench/run.mjs): calls in flight reach it at once.
const config = procs.writeConfig(dir, "one.toml", { everything: ["concurrency = 64"] }, { expose: values.mode === "proxy" ? "tools" : undefined });
const targets = {
  relay: { args: [procs.RELAY, node, procs.EVERYTHING, "stdio"], via: { viaGaggle: false } },
  "least gateway": { args: [procs.LEAST_GATEWAY, "everything", node, procs.EVERYTHING, "stdio"], via: gatewayEcho(values.mode) },
  gaggle: { args: [values.gaggle, "--config", config], via: gatewayEcho(values.mode) },
};

/** One round of the calls: sequential, or `depth` in flight. */
function run(call, n) {
  return depth === 1 ? latencySamples(call, n) : throughput(call, n, depth);
}

/** The samples perf took of `pid` while `work` ran, by kind and by symbol. */
async function sampled(pid, work) {
  const file = `${dir}/perf-${pid}.data`;
  const recorder = spawn("perf", ["record", "-q", "-F", String(SAMPLES_PER_SECOND), "-p", String(pid), "-o", file], { stdio: "ignore" });
  const started = await new Promise((resolve) => {
    recorder.once("error", () => resolve(false));
    setTimeout(() => resolve(recorder.exitCode === null), 500);
  });
  if (!started) throw new Error("perf record did not start: is perf allowed here (root, or kernel.perf_event_paranoid <= 1)?");
  await work();
  const ended = new Promise((resolve) => recorder.once("exit", resolve));
  recorder.kill("SIGINT");
  await ended;
  const report = spawnSync("perf", ["report", "-i", file, "--no-children", "-n", "--sort", "dso,sym", "--stdio", "-g", "none"], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (report.status !== 0) throw new Error(`perf report failed: ${report.stderr.trim()}`);
  const byKind = new Map();
  const bySymbol = [];
  let total = 0;
  for (const line of report.stdout.split("\n")) {
    // "    2.39%           359  node                 [.] v8::internal::StringTable::LookupKey<...>"
    const match = /^\s*[\d.]+%\s+(\d+)\s+(\[JIT\] tid \d+|\S+)\s+\[[.k]\]\s+(.*)$/.exec(line);
    if (!match) continue;
    const [, count, dso, symbol] = match;
    const samples = Number(count);
    const kind = KINDS.find(([, matches]) => matches(dso, symbol))?.[0] ?? OTHER;
    byKind.set(kind, (byKind.get(kind) ?? 0) + samples);
    bySymbol.push({ samples, name: symbol.replace(/\s+\(\/tmp\/perf-\d+\.map\)$/, "") });
    total += samples;
  }
  if (total === 0) throw new Error("perf took no samples of the hop");
  return { byKind, bySymbol: bySymbol.sort((a, b) => b.samples - a.samples), total };
}

async function main() {
  const opened = {};
  for (const [name, { args, via }] of Object.entries(targets)) {
    const endpoint = await procs.Endpoint.start(name, node, [...jitNames, ...args], procs.STEADY_ENV);
    opened[name] = { endpoint, call: echoCaller(endpoint, via) };
  }
  const profiles = {};
  try {
    for (const { call } of Object.values(opened)) {
      await latencySamples(call, WARM_CALLS);
      if (depth > 1) await throughput(call, WARM_CALLS, depth);
    }
    // The hops take turns, round by round, so that a slow spell of the machine falls on each alike.
    const cpu = await interleave(opened, CPU_ROUNDS, async ({ endpoint, call }) => {
      const before = procs.processCpuNsOf(endpoint.pid);
      await run(call, calls);
      return (procs.processCpuNsOf(endpoint.pid) - before) / calls / 1000;
    });
    for (const [name, { endpoint, call }] of Object.entries(opened)) {
      profiles[name] = { cpuUs: median(cpu[name]), ...(await sampled(endpoint.pid, () => run(call, calls))) };
    }
  } finally {
    for (const { endpoint } of Object.values(opened)) await endpoint.close();
  }
  report(profiles);
}

function report(profiles) {
  const names = Object.keys(profiles);
  const where =
    depth > 1 ? `${depth} calls in flight, unpinned` : pinProblem ? "one call at a time, unpinned" : "one call at a time, every process on one core";
  process.stdout.write(`where each hop's CPU goes: ${calls} echo calls (${values.mode} mode for the gateways), ${where}; µs a call\n\n`);
  const width = Math.max(...KIND_NAMES.map((kind) => kind.length));
  const cell = (text) => String(text).padStart(15);
  process.stdout.write(`${"".padEnd(width)}${names.map(cell).join("")}\n`);
  for (const kind of KIND_NAMES) {
    const shares = names.map((name) => {
      const { byKind, total, cpuUs } = profiles[name];
      return ((byKind.get(kind) ?? 0) / total) * cpuUs;
    });
    process.stdout.write(`${kind.padEnd(width)}${shares.map((us) => cell(us.toFixed(1))).join("")}\n`);
  }
  process.stdout.write(
    `${"the hop's CPU a call (every thread)".padEnd(width)}${names.map((name) => cell(profiles[name].cpuUs.toFixed(1))).join("")}\n`,
  );
  process.stdout.write(`${"perf's samples".padEnd(width)}${names.map((name) => cell(profiles[name].total)).join("")}\n`);
  if (!Object.values(profiles).some(({ byKind }) => byKind.has(KINDS[0][0]))) {
    process.stdout.write("\nno kernel samples: perf may read only user space here (kernel.perf_event_paranoid above 1)\n");
  }
  for (const name of rows > 0 ? names : []) {
    const { bySymbol, total, cpuUs } = profiles[name];
    process.stdout.write(`\n${name}: its ${rows} costliest symbols, µs a call\n`);
    for (const { samples, name: symbol } of bySymbol.slice(0, rows)) {
      process.stdout.write(`${((samples / total) * cpuUs).toFixed(2).padStart(8)}  ${symbol.slice(0, 110)}\n`);
    }
  }
}

try {
  await main();
} finally {
  procs.removeDir(dir);
}
