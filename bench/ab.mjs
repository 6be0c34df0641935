// Owns the quick one-core comparison of two gaggle builds: several fresh instances of each (and one bare relay), every
// process on one core, rounds of sequential echo calls taking turns, and for each build its p50 and the CPU a call of
// gaggle, of its child and of the client, each the median of an instance's rounds, averaged over its instances.
//
//   node bench/ab.mjs --before OTHER/dist/cli.js [--instances 4] [--rounds 5] [--calls 3000]   (after npm run build in both)
//
// Fresh processes of one build differ on one core by more than a change of a few percent moves them (what each one's
// JIT made of the path, where its code and heap landed): one instance of each build, as bench/run.mjs has, cannot
// judge such a change, and bench/compare.mjs runs the whole of run.mjs for each. This measures only the one-core
// goals' figures, with as many instances as asked, in a few minutes. Meta mode, as the bench's calls are.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { echoCaller, interleave, latencySamples, median, summarize } from "./measure.mjs";
import * as procs from "./procs.mjs";

const { values } = parseArgs({
  options: {
    before: { type: "string" },
    instances: { type: "string", default: "4" },
    rounds: { type: "string", default: "5" },
    calls: { type: "string", default: "3000" },
    help: { type: "boolean", short: "h" },
  },
});
const instances = Number(values.instances);
const rounds = Number(values.rounds);
const calls = Number(values.calls);
if (values.help || values.before === undefined || !(instances >= 1) || !(rounds >= 1) || !(calls >= 100)) {
  process.stdout.write("usage: node bench/ab.mjs --before OTHER/dist/cli.js [--instances N] [--rounds N] [--calls N]\n");
  process.exit(values.help ? 0 : 2);
}
const builds = { before: resolve(values.before), after: procs.GAGGLE_CLI };
for (const cli of Object.values(builds)) if (!existsSync(cli)) throw new Error(`${cli} is missing; run npm run build in its checkout`);
/** As bench/run.mjs warms every process on the path before it measures. */
const WARM_CALLS = 9000;
const FIGURES = ["p50", "gaggle", "child", "client"];

const dir = procs.makeTempDir();
const unpinned = procs.pinToOneCore();
if (unpinned) throw new Error(`bench/ab.mjs measures on one core, which is not possible here: ${unpinned}`);
const config = procs.writeConfig(dir, "one.toml", { everything: ["concurrency = 64"] });
const node = process.execPath;
const opened = {};
try {
  opened.relay = await procs.Endpoint.start("relay", node, [procs.RELAY, node, procs.EVERYTHING, "stdio"], procs.STEADY_ENV);
  for (let instance = 1; instance <= instances; instance++) {
    for (const [build, cli] of Object.entries(builds)) {
      opened[`${build} ${instance}`] = await procs.Endpoint.start(build, node, [cli, "--config", config], procs.STEADY_ENV);
    }
  }
  const targets = Object.fromEntries(
    Object.entries(opened).map(([name, endpoint]) => [name, { endpoint, call: echoCaller(endpoint, { viaGaggle: name !== "relay" }) }]),
  );
  await interleave(targets, 1, ({ call }) => latencySamples(call, WARM_CALLS));
  // gaggle starts its child on the first call.
  for (const [name, target] of Object.entries(targets)) {
    target.child = procs.childrenOf(target.endpoint.pid)[0];
    if (target.child === undefined) throw new Error(`${name} (pid ${target.endpoint.pid}) has no child process`);
  }
  const results = await interleave(targets, rounds, async ({ endpoint, child, call }) => {
    const hop = procs.cpuNsOf(endpoint.pid);
    const childNs = procs.cpuNsOf(child);
    const client = process.cpuUsage();
    const samples = await latencySamples(call, calls);
    const clientUs = process.cpuUsage(client);
    return {
      p50: summarize(samples).p50Ms * 1000,
      gaggle: (procs.cpuNsOf(endpoint.pid) - hop) / calls / 1000,
      child: (procs.cpuNsOf(child) - childNs) / calls / 1000,
      client: (clientUs.user + clientUs.system) / calls,
    };
  });
  report(results);
} finally {
  for (const endpoint of Object.values(opened)) await endpoint.close();
  procs.removeDir(dir);
}

/** Each instance's medians, and each build's average of them with their spread; the after build against the before. */
function report(results) {
  const perInstance = Object.fromEntries(
    Object.entries(results).map(([name, runs]) => [
      name,
      Object.fromEntries(FIGURES.map((figure) => [figure, median(runs.map((run) => run[figure]))])),
    ]),
  );
  const cell = (us) => `${us.toFixed(1)} µs`.padStart(10);
  process.stdout.write(
    `one core, ${calls} sequential calls a round, ${rounds} rounds, ${instances} instances of each build; medians of each instance's rounds\n`,
  );
  process.stdout.write(`${"".padEnd(12)}${["p50", "gaggle CPU", "child CPU", "client CPU"].map((head) => head.padStart(12)).join("")}\n`);
  const relay = perInstance.relay;
  process.stdout.write(`${"the relay".padEnd(12)}  ${FIGURES.map((figure) => cell(relay[figure])).join("  ")}   (its CPU: the relay's)\n`);
  const averages = {};
  for (const build of Object.keys(builds)) {
    const mine = Object.entries(perInstance).filter(([name]) => name.startsWith(`${build} `));
    averages[build] = Object.fromEntries(
      FIGURES.map((figure) => [figure, mine.reduce((sum, [, figures]) => sum + figures[figure], 0) / mine.length]),
    );
    const spread = mine.map(([, figures]) => figures.gaggle.toFixed(1)).join(", ");
    process.stdout.write(
      `${build.padEnd(12)}  ${FIGURES.map((figure) => cell(averages[build][figure])).join("  ")}   (gaggle's CPU by instance: ${spread})\n`,
    );
  }
  const { before, after } = averages;
  const ratio = (figure) => (after[figure] / before[figure]).toFixed(3);
  process.stdout.write(`after / before: ${FIGURES.map((figure) => `${figure} ${ratio(figure)}`).join(", ")}\n`);
  process.stdout.write(
    `against the relay: p50 ${(after.p50 / relay.p50).toFixed(2)}x (before ${(before.p50 / relay.p50).toFixed(2)}x), gaggle's CPU ${(after.gaggle / relay.gaggle).toFixed(2)}x (before ${(before.gaggle / relay.gaggle).toFixed(2)}x)\n`,
  );
}
