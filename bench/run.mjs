// Owns one bench run: server-everything called directly, through a bare pipe relay and through gaggle, then the report.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem, platform, arch } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { echoCaller, interleave, latencySamples, median, medianRun, summarize, throughput } from "./measure.mjs";
import * as procs from "./procs.mjs";
import { formatReport, judge, sizeOf } from "./report.mjs";

const SETTINGS = {
  coldCalls: 500,
  // Node's JIT needs thousands of calls to settle in every process on the path. Measured on one core, in blocks
  // of 1,000 calls from a fresh start: direct p50 stops falling after about 5,000 calls, gaggle's after about 6,000.
  warmUpCalls: 8000,
  sequentialCalls: 2000,
  latencyRounds: 4,
  throughputCalls: 3000,
  throughputRounds: 3,
  // With many calls in flight a round of 3,000 calls lasts a tenth of a second, and one collector pause or scheduler
  // tick moved it by a fifth from round to round; rounds of half a second, and more of them, hold the median.
  deepCalls: 15000,
  deepRounds: 5,
  depth: 64,
  gaggleConcurrency: 64,
};
/** The run takes about 20 s; past this, something hangs and the run is an error. */
const WATCHDOG_MS = 120_000;
const CLEANUP_WAIT_MS = 5_000;

const { values } = parseArgs({ options: { json: { type: "string" }, help: { type: "boolean", short: "h" } } });
if (values.help) {
  process.stdout.write("usage: node bench/run.mjs [--json PATH]   (npm run bench builds dist/ first)\n");
  process.exit(0);
}

const started = performance.now();
const endpoints = [];
const pids = new Set();
const dir = procs.makeTempDir();

const watchdog = setTimeout(() => {
  process.stderr.write(`bench: no result after ${WATCHDOG_MS / 1000}s; stopping\n`);
  for (const pid of pids) if (procs.isAlive(pid)) process.kill(pid, "SIGTERM");
  procs.removeDir(dir);
  process.exit(1);
}, WATCHDOG_MS).unref();

async function timed(run) {
  const start = performance.now();
  const value = await run();
  return { value, ms: performance.now() - start };
}

async function open(label, args) {
  const { value: endpoint, ms } = await timed(() => procs.Endpoint.start(label, process.execPath, args, procs.STEADY_ENV));
  endpoints.push(endpoint);
  pids.add(endpoint.pid);
  return { endpoint, connectMs: ms };
}

async function childPidOf(gaggle, serverId) {
  const result = await gaggle.client.callTool({ name: "get_child_status", arguments: { server_id: serverId } });
  if (result.isError) throw new Error(`get_child_status ${serverId}: ${result.content[0].text}`);
  return JSON.parse(result.content[0].text).pid;
}

async function main() {
  if (!existsSync(procs.GAGGLE_CLI)) throw new Error(`${procs.GAGGLE_CLI} is missing; run npm run build (npm run bench does)`);
  const r = { machine: machine(), settings: { ...SETTINGS, child: childVersion() } };
  const oneChild = procs.writeConfig(dir, "one.toml", { everything: [`concurrency = ${SETTINGS.gaggleConcurrency}`] });

  const { opened, targets, relayChild } = await openTargets(oneChild);
  const { direct: d, relay: rl, gaggle: g } = Object.fromEntries(Object.entries(opened).map(([k, v]) => [k, v.endpoint]));
  r.toolsList = { direct: sizeOf(await d.client.listTools()), oneChild: sizeOf(await g.client.listTools()) };
  const memory = { gaggleStartup: procs.memoryOf(g.pid) };

  r.startup = { connectMs: {}, firstCallMs: {} };
  for (const [name, call] of Object.entries(targets)) {
    r.startup.connectMs[name] = opened[name].connectMs;
    r.startup.firstCallMs[name] = (await timed(() => call(-1))).ms;
  }
  const gaggleChild = await childPidOf(g, "everything");
  if (typeof gaggleChild !== "number") throw new Error(`gaggle reports no pid for its child after a call`);
  pids.add(gaggleChild);

  const cold = await interleave(targets, 1, (call) => latencySamples(call, SETTINGS.coldCalls));
  await interleave(targets, 1, (call) => latencySamples(call, SETTINGS.warmUpCalls));
  // The least gateway beside them for throughput alone, as warm as they will be when it is measured.
  const least = await open("least gateway", [procs.LEAST_GATEWAY, "everything", process.execPath, procs.EVERYTHING, "stdio"]);
  for (const pid of procs.childrenOf(least.endpoint.pid)) pids.add(pid);
  const rateTargets = { ...targets, least: echoCaller(least.endpoint, { viaGaggle: true }) };
  await latencySamples(rateTargets.least, SETTINGS.coldCalls + SETTINGS.warmUpCalls + SETTINGS.sequentialCalls);
  memory.gaggleWarm = procs.memoryOf(g.pid);

  const measured = { gaggle: g.pid, gaggleChild, direct: d.pid, relay: rl.pid, relayChild };
  const ticksBefore = Object.fromEntries(Object.entries(measured).map(([k, pid]) => [k, procs.cpuTicksOf(pid)]));
  const benchBefore = process.cpuUsage();
  const warm = await warmLatency(targets);
  r.latency = {};
  for (const name of Object.keys(targets)) {
    r.latency[name] = { cold: summarize(cold[name].flat()), warm: summarize(warm[name].flat()) };
  }

  r.throughput = {};
  // The process each target's client talks to (the child itself, for direct): the CPU of each round, every thread.
  const hops = { direct: d.pid, relay: rl.pid, gaggle: g.pid, least: least.endpoint.pid };
  for (const [key, depth, n, rounds] of [
    ["depth1", 1, SETTINGS.throughputCalls, SETTINGS.throughputRounds],
    ["deep", SETTINGS.depth, SETTINGS.deepCalls, SETTINGS.deepRounds],
  ]) {
    // A round at this depth first, not counted: the sequential warm-up leaves cold the code that many calls in flight
    // run (several requests in a chunk, a table of many), and a first round would measure its warming up.
    await interleave(rateTargets, 1, (call) => throughput(call, n, depth));
    const runs = await interleave(rateTargets, rounds, async (call, name) => {
      const before = procs.processCpuNsOf(hops[name]);
      const run = await throughput(call, n, depth);
      return { ...run, cpuUsPerCall: (procs.processCpuNsOf(hops[name]) - before) / run.calls / 1000 };
    });
    r.throughput[key] = Object.fromEntries(
      Object.entries(runs).map(([name, list]) => [name, { ...medianRun(list), cpuUsPerCall: median(list.map((run) => run.cpuUsPerCall)) }]),
    );
  }

  // Each target's calls at both depths, the uncounted round included; the least gateway made as many.
  const rateCalls = (SETTINGS.throughputRounds + 1) * SETTINGS.throughputCalls + (SETTINGS.deepRounds + 1) * SETTINGS.deepCalls;
  const calls = SETTINGS.sequentialCalls + rateCalls;
  const bench = process.cpuUsage(benchBefore);
  r.cpu = { calls, usPerCall: {} };
  for (const [name, pid] of Object.entries(measured)) {
    r.cpu.usPerCall[name] = ((procs.cpuTicksOf(pid) - ticksBefore[name]) / procs.TICKS_PER_SECOND / calls) * 1e6;
  }
  r.cpu.usPerCall.bench = (bench.user + bench.system) / (Object.keys(targets).length * calls + rateCalls);
  Object.assign(memory, {
    gaggleAfterLoad: procs.memoryOf(g.pid),
    gaggleChild: procs.memoryOf(gaggleChild),
    direct: procs.memoryOf(d.pid),
  });
  r.shutdown = {};
  for (const endpoint of [d, rl, g]) r.shutdown[endpoint.label] = (await timed(() => endpoint.close())).ms;
  await least.endpoint.close();

  await twentyChildren(r, memory);
  r.memory = memory;
  r.oneCore = await oneCoreLatency(oneChild);
  r.cleanup = { pids: [...pids], leftover: await procs.waitGone([...pids], CLEANUP_WAIT_MS) };
  r.goals = judge(r);
  r.elapsedMs = performance.now() - started;
  return r;
}

/** A second gaggle: 20 lazily started children at the default concurrency of 1. */
async function twentyChildren(r, memory) {
  const children = {};
  for (let i = 1; i <= 20; i++) children[i === 1 ? "everything" : `everything_${String(i).padStart(2, "0")}`] = [];
  const { endpoint: g20 } = await open("gaggle-20", [procs.GAGGLE_CLI, "--config", procs.writeConfig(dir, "twenty.toml", children)]);
  r.toolsList.twentyChildren = sizeOf(await g20.client.listTools());
  const started = await Promise.all(Object.keys(children).map((name) => childPidOf(g20, name)));
  r.toolsList.childrenStartedByList = started.filter((pid) => pid !== null).length;
  memory.twentyIdle = procs.memoryOf(g20.pid);

  const call = echoCaller(g20, { viaGaggle: true });
  await latencySamples(call, SETTINGS.warmUpCalls);
  pids.add(await childPidOf(g20, "everything"));
  r.throughput.serialised = await throughput(call, SETTINGS.throughputCalls, SETTINGS.depth);
  await g20.close();
}

/**
 * Sequential latency again with every process on one core. Unpinned, each hop of a call wakes a process that
 * may sit on the other core, and on a VM that wake-up can cost more than the whole direct call; on one core
 * a hop is a plain context switch, so the ratios show the work each target does per call. Runs last: the
 * bench process stays pinned.
 */
async function oneCoreLatency(config) {
  const unavailable = procs.pinToOneCore();
  if (unavailable) return { skipped: unavailable };
  const { opened, targets } = await openTargets(config, ", one core", true);
  // The child's pid is asked for after one call, before the warm-up: a call of another meta-tool after it would leave
  // the call path's optimized code to be made again, for more than one tool, inside the measured rounds.
  await targets.gaggle(-1);
  pids.add(await childPidOf(opened.gaggle.endpoint, "everything"));
  await interleave(targets, 1, (call) => latencySamples(call, SETTINGS.warmUpCalls));
  // CPU of the process each target's client talks to: the child itself for direct, the hop for the others.
  const hopPids = Object.fromEntries(Object.entries(opened).map(([name, { endpoint }]) => [name, endpoint.pid]));
  const cpuBefore = Object.fromEntries(Object.entries(hopPids).map(([name, pid]) => [name, procs.cpuNsOf(pid)]));
  const warm = await warmLatency(targets);
  const cpuUsPerCall = (name) => (procs.cpuNsOf(hopPids[name]) - cpuBefore[name]) / SETTINGS.sequentialCalls / 1000;
  const result = Object.fromEntries(
    Object.entries(warm).map(([name, rounds]) => [name, { warm: summarize(rounds.flat()), cpuUsPerCall: cpuUsPerCall(name) }]),
  );
  for (const { endpoint } of Object.values(opened)) await endpoint.close();
  return result;
}

/**
 * Fresh processes for the three targets: server-everything direct, behind the bare relay, and behind gaggle; with
 * `baselines`, two more: the reading relay (bench/reading-relay.mjs: what any hop that checks each message pays) and
 * the least gateway (bench/least-gateway.mjs: what any hop that also routes and checks calls as gaggle must pays).
 */
async function openTargets(gaggleConfig, labelSuffix = "", baselines = false) {
  const opened = {
    direct: await open(`direct${labelSuffix}`, [procs.EVERYTHING, "stdio"]),
    relay: await open(`relay${labelSuffix}`, [procs.RELAY, process.execPath, procs.EVERYTHING, "stdio"]),
    ...(baselines && {
      reading: await open(`reading relay${labelSuffix}`, [procs.READING_RELAY, process.execPath, procs.EVERYTHING, "stdio"]),
      least: await open(`least gateway${labelSuffix}`, [procs.LEAST_GATEWAY, "everything", process.execPath, procs.EVERYTHING, "stdio"]),
    }),
    gaggle: await open(`gaggle${labelSuffix}`, [procs.GAGGLE_CLI, "--config", gaggleConfig]),
  };
  const relayPid = opened.relay.endpoint.pid;
  const relayChild = procs.childrenOf(relayPid)[0];
  if (relayChild === undefined) throw new Error(`the relay (pid ${relayPid}) has no child process`);
  pids.add(relayChild);
  if (baselines) for (const hop of [opened.reading, opened.least]) for (const pid of procs.childrenOf(hop.endpoint.pid)) pids.add(pid);
  const targets = {
    direct: echoCaller(opened.direct.endpoint, { viaGaggle: false }),
    relay: echoCaller(opened.relay.endpoint, { viaGaggle: false }),
    ...(baselines && {
      reading: echoCaller(opened.reading.endpoint, { viaGaggle: false }),
      least: echoCaller(opened.least.endpoint, { viaGaggle: true }),
    }),
    gaggle: echoCaller(opened.gaggle.endpoint, { viaGaggle: true }),
  };
  return { opened, targets, relayChild };
}

/** The warm sequential samples of every target, interleaved by rounds. */
function warmLatency(targets) {
  const perRound = SETTINGS.sequentialCalls / SETTINGS.latencyRounds;
  return interleave(targets, SETTINGS.latencyRounds, (call) => latencySamples(call, perRound));
}

function machine() {
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    totalMemGiB: totalmem() / 2 ** 30,
    node: process.version,
    platform: `${platform()} ${arch()}`,
    idle: idleDriver(),
    date: new Date().toISOString(),
  };
}

/**
 * How an idle core waits, which sets what a wake-up on another core costs. On a VM whose idle cores halt at
 * once (haltpoll with guest_halt_poll_ns = 0), each such wake-up is an exit to the hypervisor.
 */
function idleDriver() {
  const read = (path) => (existsSync(path) ? readFileSync(path, "utf8").trim() : undefined);
  const driver = read("/sys/devices/system/cpu/cpuidle/current_driver");
  if (driver === undefined) return undefined;
  const pollNs = driver === "haltpoll" ? read("/sys/module/haltpoll/parameters/guest_halt_poll_ns") : undefined;
  return pollNs === undefined ? driver : `${driver}, guest_halt_poll_ns = ${pollNs}`;
}

function childVersion() {
  const pkg = JSON.parse(readFileSync(join(dirname(procs.EVERYTHING), "..", "package.json"), "utf8"));
  return `${pkg.name} ${pkg.version}`;
}

function stderrTails() {
  return endpoints
    .filter((endpoint) => endpoint.stderrTail.length > 0)
    .map((endpoint) => `--- stderr of ${endpoint.label} (pid ${endpoint.pid}) ---\n${endpoint.stderrTail.join("\n")}`)
    .join("\n");
}

try {
  const results = await main();
  process.stdout.write(formatReport(results));
  if (values.json) {
    const path = resolve(values.json);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify(results, null, 2) + "\n");
    process.stdout.write(`results written to ${path}\n`);
  }
  // A failed goal is part of the report; only leftover processes make the run itself wrong.
  process.exitCode = results.cleanup.leftover.length > 0 ? 1 : 0;
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  const tails = stderrTails();
  if (tails) process.stderr.write(`${tails}\n`);
  process.exitCode = 1;
} finally {
  await Promise.allSettled(endpoints.map((endpoint) => endpoint.close()));
  const leftover = await procs.waitGone([...pids], CLEANUP_WAIT_MS);
  if (leftover.length > 0) {
    process.stderr.write(`bench: processes still alive after closing: ${leftover.join(", ")}\n`);
    process.exitCode = 1;
  }
  procs.removeDir(dir);
  clearTimeout(watchdog);
}
