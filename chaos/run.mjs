// `npm run chaos`: longer runs of the attacks gaggle was hardened against, each against the built dist/cli.js, and
// the figures: calls made, answered, failed by code, hung, orphans, gaggle's peak RSS. Exits 1 when a figure that
// must be 0 is not (hung calls, orphans, a crash, a policy miss).
//
//   node chaos/run.mjs [--quick | --scale N] [--only NAME,...] [--json PATH]
//   CHAOS_SCALE=N works as --scale; --quick is --scale 0.2.
import { existsSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { GAGGLE_CLI } from "./lib/gaggle.mjs";
import { CallTally, mib } from "./lib/figures.mjs";
import { killRunLeftovers } from "./lib/procs.mjs";

const ATTACKS = {
  crash: "./crash-under-load.mjs",
  children: "./misbehaving-children.mjs",
  "slow-client": "./slow-client.mjs",
  "fuzz-stdio": "./fuzz-stdio.mjs",
  "fuzz-http": "./fuzz-http.mjs",
  config: "./config-mutation.mjs",
  policy: "./policy-corpus.mjs",
  duckdb: "./duckdb-escapes.mjs",
  banned: "./banned-spellings.mjs",
  principals: "./two-principals.mjs",
  workspace: "./workspace-files.mjs",
  flood: "./listener-flood.mjs",
  confinement: "./confinement.mjs",
};

const { values } = parseArgs({
  options: {
    quick: { type: "boolean" },
    scale: { type: "string" },
    only: { type: "string" },
    json: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  process.stdout.write(
    `usage: node chaos/run.mjs [--quick | --scale N] [--only ${Object.keys(ATTACKS).join(",")}] [--json PATH]\n` +
      "  --scale 1 (the default) takes a few minutes; --quick is --scale 0.2; CHAOS_SCALE=N works as --scale\n",
  );
  process.exit(0);
}
const scale = values.quick ? 0.2 : Number(values.scale ?? process.env.CHAOS_SCALE ?? 1);
if (!(scale > 0)) throw new Error(`--scale must be a number above 0; got ${values.scale ?? process.env.CHAOS_SCALE}`);
const only = values.only?.split(",") ?? Object.keys(ATTACKS);
const unknown = only.filter((name) => !(name in ATTACKS));
if (unknown.length > 0) throw new Error(`no attack named ${unknown.join(", ")}; the attacks: ${Object.keys(ATTACKS).join(", ")}`);
if (!existsSync(GAGGLE_CLI)) throw new Error(`${GAGGLE_CLI} is missing; run npm run build (npm run chaos does)`);

/** A run takes a few minutes at scale 1; past this, something hangs that no attack's own limit caught. */
const WATCHDOG_MS = Math.max(10, 20 * scale) * 60_000;
setTimeout(() => {
  process.stderr.write(`chaos: no result after ${WATCHDOG_MS / 60_000} minutes; stopping\n`);
  killRunLeftovers();
  process.exit(2);
}, WATCHDOG_MS).unref();

const started = Date.now();
const out = (line = "") => process.stdout.write(`${line}\n`);
out(`gaggle chaos (chaos/run.mjs): ${cpus()[0]?.model ?? "unknown CPU"}, ${cpus().length} cores, Node ${process.versions.node}; scale ${scale}`);

const results = [];
for (const name of only) {
  const attack = await import(ATTACKS[name]);
  const began = Date.now();
  out();
  out(`${attack.title} (chaos/${ATTACKS[name].slice(2)})`);
  let result;
  try {
    result = await attack.run({ scale });
  } catch (error) {
    result = { title: attack.title, figures: [["error", error.stack ?? String(error)]], mustBeZero: { "attack failed": 1 } };
  }
  result.seconds = (Date.now() - began) / 1000;
  const width = Math.max(...result.figures.map(([label]) => label.length));
  for (const [label, value] of result.figures) out(`  ${label.padEnd(width)}  ${value}`);
  out(`  ${"took".padEnd(width)}  ${result.seconds.toFixed(0)} s`);
  results.push({ name, ...result });
}
// Each attack counts and kills its own orphans; this only catches what an attack that failed left behind.
const leftovers = killRunLeftovers();

const total = new CallTally();
for (const { tally } of results) if (tally) total.add(tally);
const orphans = results.reduce((sum, result) => sum + (result.orphans ?? 0), 0);
const peakKiB = Math.max(0, ...results.map((result) => result.peakKiB ?? 0));
const broken = results.flatMap(({ name, mustBeZero }) =>
  Object.entries(mustBeZero)
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${name}: ${what} ${n}`),
);
out();
out(`total over ${((Date.now() - started) / 1000).toFixed(0)} s`);
const unanswered = results.filter((result) => result.unanswered !== undefined);
const summary = [
  ...total.figures(),
  ["orphans", `${orphans}${leftovers > 0 ? ` (and ${leftovers} left by an attack that failed)` : ""}`],
  ...(unanswered.length > 0 ? [["unanswered (fuzz)", unanswered.map(({ name, unanswered: n }) => `${name} ${n}`).join(", ")]] : []),
  ["peak RSS of gaggle", peakKiB > 0 ? mib(peakKiB) : "n/a"],
];
for (const [label, value] of summary) out(`  ${label.padEnd(18)}  ${value}`);
out(broken.length === 0 ? "every figure that must be 0 is 0" : `FAILED, must be 0: ${broken.join("; ")}`);
if (values.json) writeFileSync(values.json, JSON.stringify({ scale, results: results.map(({ tally: _tally, ...rest }) => rest) }, null, 2));
process.exitCode = broken.length === 0 ? 0 : 1;
