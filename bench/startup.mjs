// How fast gaggle is ready, and how little it holds while idle, with many children configured:
//  - fifty children of ten tools each (fixtures/many-tools.mjs, a third of them slow to start), proxy mode: the
//    first tools/list from an empty catalog (cold) and from the catalog the cold run left (warm);
//  - the same fifty in meta mode, none started: gaggle's resident memory 2 s after start and once settled (25 s),
//    beside a bare Node process;
//  - one child: spawn to answered initialize, and spawn to the first tools/list with a warm catalog, beside the
//    child spoken to directly;
//  - exit: from SIGINT, SIGTERM or the end of stdin to gaggle's exit, with server-everything running (a client such
//    as Claude Code sends SIGTERM 100 ms after SIGINT, and SIGKILL 400 ms after that).
// Each figure is the median of ROUNDS runs; every client speaks raw JSON-RPC lines, so it adds nothing to time.
//
//   node bench/startup.mjs        (npm run bench builds dist/ first)
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { GAGGLE_CLI, ROOT, makeTempDir, memoryOf, removeDir, startLines } from "./procs.mjs";

const CHILDREN = 50;
const SLOW_START_MS = 3000;
const LIST_WAIT_MS = 2000;
const ROUNDS = 5;
/** Resident memory is read soon after start, and once V8 has settled (its memory reducer runs some 8 s after start). */
const IDLE_EARLY_MS = 2000;
const IDLE_SETTLED_MS = 25_000;
const IDLE_ROUNDS = 3;
const GOALS = { warmListMs: 300, coldListOverWaitMs: 100, idleRssMiB: 64, initializeMs: 150, oneChildWarmListMs: 200, exitMs: 300 };
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const MANY_TOOLS = join(ROOT, "fixtures", "many-tools.mjs");

const dir = makeTempDir();
const INITIALIZE = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } };

function gaggleConfig(name, expose, children) {
  const lines = ["[gateway]", `expose = "${expose}"`, 'log_level = "warn"', `list_wait_ms = ${LIST_WAIT_MS}`, ""];
  for (const virtual of ["process", "goose", "team"]) lines.push(`[virtual.${virtual}]`, "enabled = false", "");
  for (const [child, env] of children) {
    lines.push(`[mcp_servers.${child}]`, `command = ${JSON.stringify(process.execPath)}`, `args = [${JSON.stringify(MANY_TOOLS)}]`);
    // A fixed working directory: the catalog's entry belongs to the child's definition, cwd included.
    lines.push(`cwd = ${JSON.stringify(dir)}`, `env = { START_DELAY_MS = "${env}" }`, "");
  }
  const path = join(dir, `${name}.toml`);
  writeFileSync(path, lines.join("\n"));
  return path;
}

const fifty = Array.from({ length: CHILDREN }, (_, i) => [`c${i}`, i % 3 === 0 ? SLOW_START_MS : 0]);

/** Spawns gaggle, initializes, lists tools at once; the times from spawn, and from the list request. */
async function firstList(config, stateHome) {
  const gaggle = startLines(process.execPath, [GAGGLE_CLI, "--config", config], { XDG_STATE_HOME: stateHome });
  const init = await gaggle.request("initialize", INITIALIZE);
  gaggle.notify("notifications/initialized");
  const askedAt = performance.now();
  const list = await gaggle.request("tools/list");
  return {
    gaggle,
    initializeMs: init.sinceSpawnMs,
    listMs: list.sinceSpawnMs,
    listAfterAskMs: performance.now() - askedAt,
    tools: list.message.result.tools.length,
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function manyChildren() {
  const config = gaggleConfig("fifty-proxy", "tools", fifty);
  const cold = [];
  const warm = [];
  for (let round = 0; round < ROUNDS; round++) {
    const stateHome = join(dir, `state-${round}`);
    mkdirSync(stateHome);
    const first = await firstList(config, stateHome);
    cold.push(first);
    // The cold gaggle keeps starting the slow third; the catalog is whole once every child has recorded its list.
    const catalog = join(stateHome, "gaggle", "catalog");
    while (readdirSafe(catalog).length < CHILDREN) await delay(100);
    await first.gaggle.stop();
    const again = await firstList(config, stateHome);
    warm.push(again);
    await again.gaggle.stop();
  }
  return {
    coldListAfterAskMs: median(cold.map((run) => run.listAfterAskMs)),
    coldTools: median(cold.map((run) => run.tools)),
    warmListMs: median(warm.map((run) => run.listMs)),
    warmTools: median(warm.map((run) => run.tools)),
  };
}

function readdirSafe(path) {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

async function idleMemory() {
  const config = gaggleConfig("fifty-meta", "meta", fifty);
  const gaggle = [];
  const bare = [];
  for (let round = 0; round < IDLE_ROUNDS; round++) {
    const run = await firstList(config, join(dir, "state-meta"));
    gaggle.push(await residentOverTime(run.gaggle.pid));
    await run.gaggle.stop();
    const node = startLines(process.execPath, ["-e", "setInterval(() => {}, 1000)"]);
    bare.push(await residentOverTime(node.pid));
    await node.stop();
  }
  return {
    gaggleEarlyMiB: median(gaggle.map((run) => run.early)),
    gaggleRssMiB: median(gaggle.map((run) => run.settled)),
    bareNodeRssMiB: median(bare.map((run) => run.settled)),
  };
}

/** RSS in MiB at IDLE_EARLY_MS and IDLE_SETTLED_MS after the process was found idle. */
async function residentOverTime(pid) {
  await delay(IDLE_EARLY_MS);
  const early = memoryOf(pid).rssKiB / 1024;
  await delay(IDLE_SETTLED_MS - IDLE_EARLY_MS);
  return { early, settled: memoryOf(pid).rssKiB / 1024 };
}

async function oneChild() {
  const config = gaggleConfig("one-proxy", "tools", [["only", 0]]);
  const stateHome = join(dir, "state-one");
  mkdirSync(stateHome);
  const warmUp = await firstList(config, stateHome);
  await warmUp.gaggle.stop();
  const gaggle = [];
  const direct = [];
  for (let round = 0; round < ROUNDS; round++) {
    const run = await firstList(config, stateHome);
    gaggle.push(run);
    await run.gaggle.stop();
    const child = startLines(process.execPath, [MANY_TOOLS]);
    const init = await child.request("initialize", INITIALIZE);
    child.notify("notifications/initialized");
    const list = await child.request("tools/list");
    direct.push({ initializeMs: init.sinceSpawnMs, listMs: list.sinceSpawnMs });
    await child.stop();
  }
  return {
    initializeMs: median(gaggle.map((run) => run.initializeMs)),
    listMs: median(gaggle.map((run) => run.listMs)),
    directInitializeMs: median(direct.map((run) => run.initializeMs)),
    directListMs: median(direct.map((run) => run.listMs)),
  };
}

/** gaggle with server-everything started (one call made), ended each way ROUNDS times. */
async function exits() {
  const config = join(dir, "exit.toml");
  const lines = ['[gateway]\nlog_level = "warn"\n', "[virtual.goose]\nenabled = false\n", "[virtual.team]\nenabled = false\n"];
  lines.push(`[mcp_servers.everything]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(EVERYTHING)}, "stdio"]\n`);
  writeFileSync(config, lines.join("\n"));
  const stateHome = join(dir, "state-exit");
  mkdirSync(stateHome);
  const times = { SIGINT: [], SIGTERM: [], stdin: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const how of Object.keys(times)) {
      const gaggle = startLines(process.execPath, [GAGGLE_CLI, "--config", config], { XDG_STATE_HOME: stateHome });
      await gaggle.request("initialize", INITIALIZE);
      gaggle.notify("notifications/initialized");
      const call = { name: "execute_child_tool", arguments: { server_id: "everything", tool_name: "echo", arguments: { message: "up" } } };
      await gaggle.request("tools/call", call);
      times[how].push(await gaggle.end(how));
    }
  }
  return Object.fromEntries(Object.entries(times).map(([how, values]) => [how, median(values)]));
}

const verdict = (value, goal) => (value < goal ? `under ${goal}: pass` : `goal under ${goal}: fail`);
const ms = (value) => `${value.toFixed(0)} ms`;

try {
  const many = await manyChildren();
  const idle = await idleMemory();
  const one = await oneChild();
  const exit = await exits();
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const lines = [
    `gaggle start-up (bench/startup.mjs): ${cpu}, ${cpus().length} cores, Node ${process.versions.node}; medians of ${ROUNDS} runs`,
    `  ${CHILDREN} children, proxy mode, a third slow to start (${SLOW_START_MS} ms), list_wait_ms ${LIST_WAIT_MS}:`,
    `    cold first tools/list, from the request: ${ms(many.coldListAfterAskMs)} with ${many.coldTools} tools (${verdict(many.coldListAfterAskMs, LIST_WAIT_MS + GOALS.coldListOverWaitMs)})`,
    `    warm first tools/list, from spawn:       ${ms(many.warmListMs)} with ${many.warmTools} tools (${verdict(many.warmListMs, GOALS.warmListMs)})`,
    `  ${CHILDREN} children, meta mode, none started: idle RSS ${idle.gaggleRssMiB.toFixed(1)} MiB after ${IDLE_SETTLED_MS / 1000} s (${verdict(idle.gaggleRssMiB, GOALS.idleRssMiB)}), ${idle.gaggleEarlyMiB.toFixed(1)} MiB after ${IDLE_EARLY_MS / 1000} s; a bare Node process ${idle.bareNodeRssMiB.toFixed(1)} MiB`,
    `  one child, proxy mode:`,
    `    spawn to answered initialize: gaggle ${ms(one.initializeMs)} (${verdict(one.initializeMs, GOALS.initializeMs)}), the child directly ${ms(one.directInitializeMs)}`,
    `    spawn to first tools/list, warm catalog: gaggle ${ms(one.listMs)} (${verdict(one.listMs, GOALS.oneChildWarmListMs)}), the child directly ${ms(one.directListMs)}: ${(one.listMs / one.directListMs).toFixed(2)}x`,
    `  exit with server-everything running, to gaggle's exit:`,
    ...Object.entries(exit).map(
      ([how, value]) => `    from ${how === "stdin" ? "stdin closed" : how}: ${ms(value)} (${verdict(value, GOALS.exitMs)})`,
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  removeDir(dir);
}
