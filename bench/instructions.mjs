// Owns the per-call instruction count: gaggle (or a baseline hop: the bare relay, the reading relay, the least gateway) run under valgrind's callgrind, a fixed number of
// echo calls counted after warm-up. Instructions do not move with the machine's load, as wall-clock and CPU time do,
// so a change to the call path can be judged on a busy machine: run this before and after it.
//
//   node bench/instructions.mjs [--target gaggle|relay|reading-relay|least-gateway] [--mode proxy|meta] [--calls N] [--warm N] [--depth N]
//                               [--cpu-prof DIR] [--functions N] [--callers REGEX] [--footprint] [--gaggle CLI] [--http | --daemon]
//   (after npm run build; needs valgrind, unless --cpu-prof)
//
// With --cpu-prof the target runs without valgrind, under node --cpu-prof, and writes its profile to DIR when it
// ends: where the time of the same calls goes, function by function (open it in Chrome's DevTools). --gaggle runs
// another build's dist/cli.js (a checkout of the commit before a change) for a count to compare with. --http serves
// gaggle over Streamable HTTP (gaggle --http) to an SDK client over HTTP, in proxy mode. --daemon counts the daemon a
// client reaches through gaggle's relay (the way a person's clients share one gaggle), started by the bench itself so
// that it runs under valgrind; the relay in front of it copies bytes, as the bare relay does. --functions N lists the
// N functions that executed the most instructions themselves per call (self cost; JIT code named from
// `node --perf-basic-prof`'s map, gaggle's bundle by source file and line; V8's marks kept, "~" for interpreted code and "^"
// for Sparkplug's baseline, so a function the call path runs unoptimized stands out): where the count goes. --callers REGEX
// splits the self cost of the functions REGEX matches (V8's builtins and runtime: Builtins_StringAdd_CheckNone,
// Runtime_DefineKeyedOwnPropertyInLiteral, ...) by the nearest JavaScript function among their callers: which code
// pays for them (the first N rows, 40 unless --functions says). --footprint counts the code the average call runs
// instead, in 64-byte lines (see codeFootprint), by kind and, with --functions N, for the N functions with the most: with
// every process on one core, what a call costs follows it more closely than the instruction count.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { codeFootprint, selfCostByCaller, selfCostByFunction } from "./callgrind-functions.mjs";
import { echoCaller, gatewayEcho, latencySamples, throughput } from "./measure.mjs";
import * as procs from "./procs.mjs";

const { values } = parseArgs({
  options: {
    target: { type: "string", default: "gaggle" },
    mode: { type: "string", default: "proxy" },
    calls: { type: "string", default: "3000" },
    warm: { type: "string", default: "6000" },
    depth: { type: "string", default: "1" },
    "cpu-prof": { type: "string" },
    functions: { type: "string" },
    callers: { type: "string" },
    footprint: { type: "boolean" },
    http: { type: "boolean" },
    daemon: { type: "boolean" },
    gaggle: { type: "string", default: procs.GAGGLE_CLI },
    help: { type: "boolean", short: "h" },
  },
});
const daemonAsked = values.daemon && values.target === "gaggle" && !values.http;
if (
  values.help ||
  !["gaggle", "relay", "reading-relay", "least-gateway"].includes(values.target) ||
  !["proxy", "meta"].includes(values.mode) ||
  (values.daemon && !daemonAsked) ||
  (values.functions !== undefined && !(Number(values.functions) > 0)) ||
  (values.callers !== undefined && !validPattern(values.callers)) ||
  (values.footprint && values["cpu-prof"] !== undefined)
) {
  process.stdout.write(
    "usage: node bench/instructions.mjs [--target gaggle|relay|reading-relay|least-gateway] [--mode proxy|meta] [--calls N] [--warm N] [--depth N] [--cpu-prof DIR] [--functions N] [--callers REGEX] [--footprint] [--gaggle CLI] [--http | --daemon]\n",
  );
  process.exit(values.help ? 0 : 2);
}
const calls = Number(values.calls);
const warm = Number(values.warm);
/**
 * How many callers --callers keeps with each cost: enough to climb from a runtime function through V8's builtins and
 * entry stubs to the JavaScript that called it.
 */
const CALLER_DEPTH = 8;
const depth = Number(values.depth);
const callers = values.callers === undefined ? undefined : new RegExp(values.callers);
/** How many rows --functions and --callers print. */
const functions = values.functions === undefined ? (callers ? 40 : 0) : Number(values.functions);
/** The JIT's code named and each instruction's address kept: for --functions, --callers and --footprint. */
const named = functions > 0 || values.footprint === true;

function validPattern(text) {
  try {
    new RegExp(text);
    return true;
  } catch {
    return false;
  }
}

/** gaggle with one server-everything child at concurrency 64, in proxy mode (its tools under their own names) or meta mode. */
function gaggleConfig(dir) {
  const expose = values.mode === "proxy" ? "tools" : undefined;
  return procs.writeConfig(dir, "count.toml", { everything: ["concurrency = 64"] }, { expose, builtIns: false });
}

/** A call of server-everything's echo as the target's client makes it. */
function caller(endpoint) {
  if (values.target === "relay" || values.target === "reading-relay") return echoCaller(endpoint, { viaGaggle: false });
  return echoCaller(endpoint, gatewayEcho(values.mode));
}

function control(pid, ...args) {
  const result = spawnSync("callgrind_control", [...args, String(pid)], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`callgrind_control ${args.join(" ")}: ${result.stderr || result.stdout}`);
}

/**
 * The instructions a callgrind dump counted: its "totals:" line. Only the main thread's are read (the dump of thread
 * 1): V8's helper threads (concurrent marking, optimizing compiles) run as the machine's timing lets them, and would
 * make the count vary from run to run.
 */
function dumpedInstructions(file) {
  const line = /^totals:\s+(\d+)/m.exec(readFileSync(file, "utf8"));
  if (!line) throw new Error(`no totals in ${file}`);
  return Number(line[1]);
}

/** gaggle serving Streamable HTTP, as an endpoint: an SDK client over HTTP, the pid of the process, and its close. */
async function httpEndpoint(command, args) {
  const port = await procs.freePort();
  const server = spawn(command, [...args, "--http", `127.0.0.1:${port}`], { stdio: "ignore", env: { ...process.env, ...procs.STEADY_ENV } });
  const { client } = await procs.connectHttp(`http://127.0.0.1:${port}/mcp`, "gaggle", () => server.exitCode !== null, 120_000);
  const exited = new Promise((resolve) => server.once("exit", resolve));
  const close = async () => {
    await client.close();
    server.kill("SIGTERM");
    await exited;
  };
  return { label: "gaggle", client, pid: server.pid, close };
}

/**
 * gaggle's daemon of `config`, started as `command args --daemon KEY` with its own state dir, and a client of it
 * through gaggle's relay (the executable run as a client's MCP server runs it), as an endpoint whose pid is the
 * daemon's.
 */
async function daemonEndpoint(command, args, config, dir) {
  const { daemonKeyOf } = await import(pathToFileURL(join(dirname(resolve(values.gaggle)), "cli", "daemon-key.js")).href);
  const { daemonPlace } = await import(pathToFileURL(join(dirname(resolve(values.gaggle)), "cli", "daemon-files.js")).href);
  const env = { XDG_STATE_HOME: join(dir, "state"), GAGGLE_STANDALONE: "" };
  const daemonEnv = { ...process.env, ...procs.STEADY_ENV, ...env };
  const place = daemonPlace(daemonKeyOf(config, readFileSync(config, "utf8"), daemonEnv, resolve(values.gaggle)), daemonEnv);
  mkdirSync(place.dir, { recursive: true, mode: 0o700 });
  const daemon = spawn(command, [...args, "--daemon", place.key], { stdio: "ignore", env: daemonEnv });
  const exited = new Promise((resolve) => daemon.once("exit", resolve));
  for (let tries = 0; !existsSync(place.socket); tries++) {
    if (tries > 1200 || daemon.exitCode !== null) throw new Error(`the daemon did not listen at ${place.socket}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const client = await procs.Endpoint.start("gaggle", process.execPath, [resolve(values.gaggle), "--config", config], {
    ...procs.STEADY_ENV,
    ...env,
  });
  return {
    label: "gaggle",
    client: client.client,
    pid: daemon.pid,
    close: async () => {
      await client.close();
      daemon.kill("SIGTERM");
      await exited;
    },
  };
}

async function main() {
  const dir = procs.makeTempDir();
  const profiling = values["cpu-prof"] !== undefined;
  const node = process.execPath;
  const program =
    values.target === "gaggle"
      ? [resolve(values.gaggle), "--config", gaggleConfig(dir)]
      : values.target === "least-gateway"
        ? [procs.LEAST_GATEWAY, "everything", node, procs.EVERYTHING, "stdio"]
        : [values.target === "relay" ? procs.RELAY : procs.READING_RELAY, node, procs.EVERYTHING, "stdio"];
  const out = join(dir, "callgrind.out");
  const [command, args] = profiling
    ? [node, ["--cpu-prof", "--cpu-prof-interval", "50", "--cpu-prof-dir", resolve(values["cpu-prof"]), ...program]]
    : [
        "valgrind",
        [
          "--tool=callgrind",
          "--instr-atstart=no",
          "--separate-threads=yes",
          ...(named ? ["--dump-instr=yes"] : []),
          ...(callers ? [`--separate-callers=${CALLER_DEPTH}`] : []),
          `--callgrind-out-file=${out}`,
          node,
          ...(named ? ["--perf-basic-prof", "--interpreted-frames-native-stack"] : []),
          ...program,
        ],
      ];
  const endpoint = values.http
    ? await httpEndpoint(command, args)
    : daemonAsked
      ? await daemonEndpoint(command, args, gaggleConfig(dir), dir)
      : await procs.Endpoint.start(values.target, command, args, procs.STEADY_ENV);
  try {
    if (values.http) procs.countListenerWarnings();
    if (values.target === "gaggle" && values.mode === "proxy") {
      for (let tries = 0; !(await endpoint.client.listTools()).tools.some((tool) => tool.name === "everything__echo"); tries++) {
        if (tries > 300) throw new Error("tools/list does not show everything__echo");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const call = caller(endpoint);
    await latencySamples(call, warm);
    // Calls many in flight run code one at a time never does (several requests in a chunk, a table of many), which
    // the sequential warm-up leaves cold: a round at the counted depth warms it, as bench/run.mjs does.
    if (depth > 1) await throughput(call, warm, depth);
    if (!profiling) control(endpoint.pid, "-i", "on");
    const run = depth > 1 ? await throughput(call, calls, depth) : { seconds: (await latencySamples(call, calls)).reduce((a, b) => a + b, 0) / 1000 };
    if (profiling) {
      process.stdout.write(
        `${values.target} (${values.mode}): ${calls} calls, ${depth} in flight, in ${run.seconds.toFixed(2)} s; profile in ${values["cpu-prof"]}\n`,
      );
      return;
    }
    control(endpoint.pid, "-i", "off");
    control(endpoint.pid, "-d");
    const counted = dumpedInstructions(`${out}.1-01`);
    const label =
      values.target === "gaggle" ? `gaggle (${values.mode} mode${values.http ? ", over HTTP" : daemonAsked ? ", its daemon" : ""})` : values.target;
    process.stdout.write(
      `${label}: ${Math.round(counted / calls).toLocaleString("en-US")} instructions per call (${calls} calls, ${depth} in flight)\n`,
    );
    const bundleMap = join(dirname(resolve(values.gaggle)), "gaggle.cjs.map");
    const perfMap = `/tmp/perf-${endpoint.pid}.map`;
    if (values.footprint) {
      const { bytes, byKind, byFunction } = codeFootprint(`${out}.1-01`, perfMap, bundleMap, calls);
      const kb = (count) => `${(count / 1024).toFixed(1).padStart(6)} KB`;
      process.stdout.write(`code the average call runs: ${kb(bytes)}\n`);
      for (const { name, bytes: size } of byKind) process.stdout.write(`  ${kb(size)}  ${name}\n`);
      for (const { name, bytes: size } of byFunction.slice(0, functions)) process.stdout.write(`${kb(size)}  ${name.slice(0, 140)}\n`);
    } else if (functions) {
      const rows = (
        callers ? selfCostByCaller(`${out}.1-01`, perfMap, bundleMap, calls, callers) : selfCostByFunction(`${out}.1-01`, perfMap, bundleMap, calls)
      ).slice(0, functions);
      for (const { name, perCall } of rows)
        process.stdout.write(`${Math.round(perCall).toLocaleString("en-US").padStart(8)}  ${name.slice(0, 150)}\n`);
    }
  } finally {
    await endpoint.close();
    procs.removeDir(dir);
    if (named) rmSync(`/tmp/perf-${endpoint.pid}.map`, { force: true });
  }
}

await main();
