// Owns the view of a whole chain under load: with many calls in flight, what each process on a call's way (the client,
// the hop, the child) spends a call, how long it waited for a core while it could run, how often it slept for want of
// work, and how busy the machine's cores were, for the bare relay, the least gateway and gaggle, their rounds taking
// turns. Throughput with calls in flight is what the machine's cores pass; this says whether they were short of CPU
// (every core busy, processes waiting for one) or of work (cores idle while the processes slept, each waiting on
// another's output), and which process's CPU grew or shrank with the hop.
//
//   node bench/chain.mjs [--depth N] [--calls N] [--rounds N] [--mode meta|proxy] [--gaggle CLI]
//   (after npm run build; Linux: it reads /proc)
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { echoCaller, gatewayEcho, interleave, latencySamples, median, throughput } from "./measure.mjs";
import * as procs from "./procs.mjs";

const { values } = parseArgs({
  options: {
    depth: { type: "string", default: "64" },
    calls: { type: "string", default: "15000" },
    rounds: { type: "string", default: "7" },
    mode: { type: "string", default: "meta" },
    gaggle: { type: "string", default: procs.GAGGLE_CLI },
    help: { type: "boolean", short: "h" },
  },
});
const depth = Number(values.depth);
const calls = Number(values.calls);
const rounds = Number(values.rounds);
if (values.help || !(depth >= 1) || !(calls >= 100) || !(rounds >= 1) || !["meta", "proxy"].includes(values.mode)) {
  process.stdout.write("usage: node bench/chain.mjs [--depth N] [--calls N] [--rounds N] [--mode meta|proxy] [--gaggle CLI]\n");
  process.exit(values.help ? 0 : 2);
}
const WARM_CALLS = 8000;

/** Busy and all time of every core together so far, in clock ticks (/proc/stat's first line). */
function machineTicks() {
  const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + fields[4];
  const all = fields.slice(0, 8).reduce((sum, x) => sum + x, 0);
  return { busy: all - idle, all };
}

/** `gateway`: the target routes calls by name, as gaggle and the least gateway do; the relay passes them as they are. */
async function openTarget(label, args, gateway) {
  const endpoint = await procs.Endpoint.start(label, process.execPath, args, procs.STEADY_ENV);
  const call = echoCaller(endpoint, gateway ? gatewayEcho(values.mode) : { viaGaggle: false });
  await call(-1);
  const child = procs.childrenOf(endpoint.pid).find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(procs.EVERYTHING));
  if (child === undefined) throw new Error(`${label} (pid ${endpoint.pid}) has no server-everything below it`);
  await latencySamples(call, WARM_CALLS);
  // A round at the depth first, not counted: the sequential warm-up leaves cold the code many calls in flight run.
  await throughput(call, calls, depth);
  return { endpoint, call, pids: { client: process.pid, hop: endpoint.pid, child } };
}

const dir = procs.makeTempDir();
const config = procs.writeConfig(
  dir,
  "chain.toml",
  { everything: [`concurrency = ${depth}`] },
  {
    builtIns: false,
    expose: values.mode === "proxy" ? "tools" : undefined,
  },
);
const node = process.execPath;
const targets = {
  relay: await openTarget("relay", [procs.RELAY, node, procs.EVERYTHING, "stdio"], false),
  least: await openTarget("least gateway", [procs.LEAST_GATEWAY, "everything", node, procs.EVERYTHING, "stdio"], true),
  gaggle: await openTarget("gaggle", [values.gaggle, "--config", config], true),
};
const ROLES = ["client", "hop", "child"];

const runs = await interleave(targets, rounds, async ({ call, pids }) => {
  const before = Object.fromEntries(ROLES.map((role) => [role, procs.processSchedOf(pids[role], { sleeps: true })]));
  const ticks = machineTicks();
  const run = await throughput(call, calls, depth);
  const after = machineTicks();
  const perCall = (role, field) => (procs.processSchedOf(pids[role], { sleeps: true })[field] - before[role][field]) / run.calls;
  const row = { callsPerSecond: run.callsPerSecond, machineBusy: ((after.busy - ticks.busy) / (after.all - ticks.all)) * cpus().length };
  for (const role of ROLES)
    row[role] = { cpuUs: perCall(role, "runNs") / 1000, waitUs: perCall(role, "waitNs") / 1000, sleeps: perCall(role, "sleeps") };
  return row;
});
for (const { endpoint } of Object.values(targets)) await endpoint.close();
procs.removeDir(dir);

const mid = (list, pick) => median(list.map(pick));
const relayRate = mid(runs.relay, (row) => row.callsPerSecond);
const head = [
  "",
  "calls/s",
  "CPU a call: client",
  "hop",
  "child",
  "chain",
  "cores busy: chain",
  "machine",
  "waits for a core a call",
  "sleeps a call",
];
const lines = [head];
for (const [name, list] of Object.entries(runs)) {
  const rate = mid(list, (row) => row.callsPerSecond);
  const cpu = Object.fromEntries(ROLES.map((role) => [role, mid(list, (row) => row[role].cpuUs)]));
  const chain = mid(list, (row) => ROLES.reduce((sum, role) => sum + row[role].cpuUs, 0));
  const each = (field, digits) => ROLES.map((role) => mid(list, (row) => row[role][field]).toFixed(digits)).join(" / ");
  lines.push([
    name === "least" ? "least gateway" : name,
    `${Math.round(rate)} (${(rate / relayRate).toFixed(2)}x)`,
    `${cpu.client.toFixed(1)} µs`,
    `${cpu.hop.toFixed(1)} µs`,
    `${cpu.child.toFixed(1)} µs`,
    `${chain.toFixed(1)} µs`,
    mid(list, (row) => (row.callsPerSecond * ROLES.reduce((sum, role) => sum + row[role].cpuUs, 0)) / 1e6).toFixed(2),
    mid(list, (row) => row.machineBusy).toFixed(2),
    `${each("waitUs", 1)} µs`,
    each("sleeps", 3),
  ]);
}
const widths = head.map((_, i) => Math.max(...lines.map((line) => line[i].length)));
process.stdout.write(
  [
    `${depth} calls in flight, ${values.mode} mode for the gateways: medians of ${rounds} rounds of ${calls} calls each, the targets taking turns`,
    `(${cpus().length} cores; CPU, waits and sleeps counted for every thread; waits and sleeps are client / hop / child)`,
    "",
    ...lines.map((line) => line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ")),
    "",
  ].join("\n"),
);
