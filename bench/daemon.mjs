// What the daemon buys a person with several client windows:
//  - the relay's start to an answered initialize with the daemon of its config running, beside a standalone gaggle's
//    start to an answered initialize;
//  - resident memory of five clients of one config (five relays, one daemon, one copy of each child) against five
//    standalone gaggles (five copies of everything), each with its child started by a call.
// Each time is the median of ROUNDS runs; the clients speak raw JSON-RPC lines, so they add nothing to the times.
//
//   node bench/daemon.mjs        (npm run bench builds dist/ first)
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { GAGGLE_CLI, ROOT, childrenOf, makeTempDir, memoryOf, removeDir, startLines, waitGone } from "./procs.mjs";
import { median } from "./measure.mjs";

const ROUNDS = 10;
const CLIENTS = 5;
const GOALS = { relayInitializeMs: 100 };
const INITIALIZE = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } };
const ECHO = join(ROOT, "fixtures", "echo.mjs");

const dir = makeTempDir();
const stateHome = join(dir, "state");
const config = join(dir, "daemon.toml");
writeFileSync(
  config,
  [
    "[gateway]",
    'log_level = "warn"',
    "",
    "[mcp_servers.echo]",
    `command = ${JSON.stringify(process.execPath)}`,
    `args = [${JSON.stringify(ECHO)}]`,
    "",
  ].join("\n"),
);

/** A gaggle spoken to in JSON-RPC lines; through the daemon unless `standalone`. */
function start(standalone) {
  const env = { XDG_STATE_HOME: stateHome, GAGGLE_STANDALONE: standalone ? "1" : "" };
  return startLines(process.execPath, [GAGGLE_CLI, "--config", config], env);
}

/** Initialized, and its child started by a call. */
async function ready(standalone) {
  const gaggle = start(standalone);
  const { sinceSpawnMs } = await gaggle.request("initialize", INITIALIZE);
  gaggle.notify("notifications/initialized");
  await gaggle.request("tools/call", { name: "execute_child_tool", arguments: { server_id: "echo", tool_name: "pid", arguments: {} } });
  return { gaggle, initializeMs: sinceSpawnMs };
}

function daemonPid() {
  const records = join(stateHome, "gaggle", "daemon");
  const name = readdirSync(records).find((file) => file.endsWith(".json"));
  return JSON.parse(readFileSync(join(records, name), "utf8")).pid;
}

/** Resident memory of a process and every process under it, in MiB. */
function treeRssMiB(pid) {
  const pids = [pid];
  for (let at = 0; at < pids.length; at++) pids.push(...childrenOf(pids[at]));
  return pids.reduce((sum, each) => sum + (memoryOf(each).rssKiB || 0), 0) / 1024;
}

/** Spawn to the first byte of a bare Node process's stdout: the floor under any relay. */
async function bareNodeMs() {
  const times = [];
  for (let round = 0; round < ROUNDS; round++) {
    const spawnedAt = performance.now();
    const child = spawn(process.execPath, ["-e", "process.stdout.write('x')"], { stdio: ["ignore", "pipe", "ignore"] });
    await new Promise((resolve) => child.stdout.once("data", resolve));
    times.push(performance.now() - spawnedAt);
  }
  return median(times);
}

async function initializeTimes() {
  // The first relay starts the daemon; the rounds after it find it running.
  const first = await ready(false);
  const relay = [];
  const standalone = [];
  for (let round = 0; round < ROUNDS; round++) {
    const viaDaemon = start(false);
    relay.push((await viaDaemon.request("initialize", INITIALIZE)).sinceSpawnMs);
    await viaDaemon.end("stdin");
    const alone = start(true);
    standalone.push((await alone.request("initialize", INITIALIZE)).sinceSpawnMs);
    await alone.end("stdin");
  }
  await first.gaggle.end("stdin");
  return { relayMs: median(relay), standaloneMs: median(standalone), coldDaemonMs: first.initializeMs };
}

async function memory() {
  const shared = [];
  for (let i = 0; i < CLIENTS; i++) shared.push((await ready(false)).gaggle);
  const daemon = daemonPid();
  const sharedMiB = shared.reduce((sum, relay) => sum + treeRssMiB(relay.pid), 0) + treeRssMiB(daemon);
  const alone = [];
  for (let i = 0; i < CLIENTS; i++) alone.push((await ready(true)).gaggle);
  const aloneMiB = alone.reduce((sum, gaggle) => sum + treeRssMiB(gaggle.pid), 0);
  await Promise.all([...shared, ...alone].map((gaggle) => gaggle.end("stdin")));
  return { sharedMiB, aloneMiB, daemon };
}

const verdict = (value, goal) => (value < goal ? `under ${goal}: pass` : `goal under ${goal}: fail`);
const ms = (value) => `${value.toFixed(0)} ms`;

try {
  const times = await initializeTimes();
  const bareMs = await bareNodeMs();
  const rss = await memory();
  spawnSync(process.execPath, [GAGGLE_CLI, "stop", "--config", config], { env: { ...process.env, XDG_STATE_HOME: stateHome }, stdio: "ignore" });
  await waitGone([rss.daemon], 10_000);
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const lines = [
    `gaggle daemon (bench/daemon.mjs): ${cpu}, ${cpus().length} cores, Node ${process.versions.node}; medians of ${ROUNDS} runs`,
    `  spawn to answered initialize: relay to a running daemon ${ms(times.relayMs)} (${verdict(times.relayMs, GOALS.relayInitializeMs)}), standalone gaggle ${ms(times.standaloneMs)}; the first relay, starting the daemon, ${ms(times.coldDaemonMs)}; a bare Node process's first output ${ms(bareMs)}`,
    `  resident memory of ${CLIENTS} clients of one config, each with the child started: through the daemon ${rss.sharedMiB.toFixed(1)} MiB (${CLIENTS} relays, one daemon, one child), ${CLIENTS} standalone gaggles ${rss.aloneMiB.toFixed(1)} MiB: ${(rss.aloneMiB / rss.sharedMiB).toFixed(2)}x`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  removeDir(dir);
}
