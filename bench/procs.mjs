// Owns the processes a bench run starts: temp gaggle configs, connected SDK clients, /proc readings, cleanup checks.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { setTimeout as delay } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The gaggle measured: this checkout's build, or another's named by GAGGLE_BENCH_CLI (to compare with the commit before). */
export const GAGGLE_CLI = process.env.GAGGLE_BENCH_CLI ? resolve(process.env.GAGGLE_BENCH_CLI) : join(ROOT, "dist", "cli.js");
export const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
export const RELAY = join(ROOT, "bench", "relay.mjs");
export const READING_RELAY = join(ROOT, "bench", "reading-relay.mjs");
export const LEAST_GATEWAY = join(ROOT, "bench", "least-gateway.mjs");

/**
 * The gaggles a bench starts over stdio each run alone (not through the daemon), as the figures are of one gaggle;
 * bench/daemon.mjs measures the daemon. Spawned processes inherit it; SDK transports get it below.
 */
process.env.GAGGLE_STANDALONE = "1";
const STANDALONE = { GAGGLE_STANDALONE: "1" };

/**
 * For a gaggle whose calls are measured once warm: no code cache. gaggle saves its code cache ten seconds after a
 * start, a one-time serialization of everything compiled that would land inside a measured window (under valgrind
 * it is 40k instructions per call over 3,000 calls). bench/startup.mjs measures starts with the cache.
 */
export const STEADY_ENV = { GAGGLE_CODE_CACHE: "off" };

/** Lines of a process's stderr kept for the error message when something goes wrong. */
const STDERR_TAIL_LINES = 20;

/** A connected SDK client over stdio, with the pid and stderr tail of the process behind it. */
export class Endpoint {
  constructor(label, transport, client, stderrTail) {
    this.label = label;
    this.transport = transport;
    this.client = client;
    this.stderrTail = stderrTail;
    /** Captured at start: the SDK forgets the pid once the transport is closed. */
    this.pid = transport.pid;
  }

  /** `env`: variables added to the SDK's default environment for the process. */
  static async start(label, command, args, env = undefined) {
    const transport = new StdioClientTransport({
      command,
      args,
      cwd: ROOT,
      stderr: "pipe",
      env: { ...getDefaultEnvironment(), ...STANDALONE, ...env },
    });
    // A piped stderr that nobody reads would fill up and block the process; keep a short tail instead.
    const stderrTail = [];
    transport.stderr?.setEncoding("utf8").on("data", (chunk) => {
      stderrTail.push(...chunk.split("\n").filter(Boolean));
      stderrTail.splice(0, Math.max(0, stderrTail.length - STDERR_TAIL_LINES));
    });
    const client = new Client({ name: "gaggle-bench", version: "0" }, { capabilities: {} });
    await client.connect(transport);
    return new Endpoint(label, transport, client, stderrTail);
  }

  async close() {
    await this.client.close();
  }
}

/**
 * Writes a gaggle config whose children all run server-everything; `children` maps name -> extra TOML lines.
 * `expose`: the gateway's expose setting ("tools" for proxy mode), its default when absent; `builtIns: false` turns
 * off the built-in children that start processes of their own (background processes, Goose, teams).
 */
export function writeConfig(dir, file, children, { expose, builtIns = true } = {}) {
  const lines = ["[gateway]", ...(expose ? [`expose = "${expose}"`] : []), 'log_level = "warn"', ""];
  for (const [name, extra] of Object.entries(children)) {
    lines.push(
      `[mcp_servers.${name}]`,
      `command = ${JSON.stringify(process.execPath)}`,
      `args = [${JSON.stringify(EVERYTHING)}, "stdio"]`,
      ...extra,
      "",
    );
  }
  if (!builtIns) for (const builtIn of ["process", "goose", "team"]) lines.push(`[virtual.${builtIn}]`, "enabled = false", "");
  const path = join(dir, file);
  writeFileSync(path, lines.join("\n"));
  return path;
}

export function makeTempDir() {
  return mkdtempSync(join(tmpdir(), "gaggle-bench-"));
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

/** VmRSS and VmHWM (peak) of a live process, in KiB. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rssKiB: field("VmRSS"), peakKiB: field("VmHWM") };
}

/** User + system CPU time a live process has used so far, in clock ticks (100 per second on Linux). */
export function cpuTicksOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15 of the whole line.
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(rest[11]) + Number(rest[12]);
}

export const TICKS_PER_SECOND = 100;

/** Time a live process has spent on a CPU so far, in nanoseconds (the scheduler's own count, not ticks). */
export function cpuNsOf(pid) {
  return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
}

/** As cpuNsOf, for every thread of the process (V8's collector and compiler threads too); a thread that ended meanwhile is not counted. */
export function processCpuNsOf(pid) {
  return processSchedOf(pid).runNs;
}

/**
 * The scheduler's counts for every thread of a process: ns on a core, ns waiting for one while it could run, and,
 * with `sleeps`, how often it slept for want of work (voluntary switches). A thread that ended meanwhile is not counted.
 */
export function processSchedOf(pid, { sleeps = false } = {}) {
  const total = { runNs: 0, waitNs: 0, sleeps: 0 };
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [runNs, waitNs] = readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ").map(Number);
      const slept = sleeps ? /^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${thread}/status`, "utf8")) : null;
      total.runNs += runNs;
      total.waitNs += waitNs;
      total.sleeps += Number(slept?.[1] ?? 0);
    } catch {
      // It ended between the listing and the read.
    }
  }
  return total;
}

/** Zombies count as gone: the process has exited and only waits to be reaped. */
export function isAlive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat[stat.lastIndexOf(")") + 2];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** Polls until every pid is gone; resolves with those still alive after `ms`. */
export async function waitGone(pids, ms) {
  const deadline = Date.now() + ms;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await delay(50);
    alive = alive.filter(isAlive);
  }
  return alive;
}

/** The pids whose parent is `pid`, found through /proc. */
export function childrenOf(pid) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/**
 * Pins this process, all its threads, to CPU 0 with util-linux's taskset; processes it starts afterwards
 * inherit the pin. Returns why it could not, or undefined once pinned.
 */
export function pinToOneCore() {
  const result = spawnSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { encoding: "utf8" });
  if (result.error) return `taskset is not available (${result.error.code ?? result.error.message})`;
  if (result.status !== 0) return `taskset failed: ${result.stderr.trim()}`;
  return undefined;
}

/** A process spoken to in JSON-RPC lines; `request` resolves with the answer and the ms from spawn to it. */
export function startLines(command, args, env = {}) {
  const spawnedAt = performance.now();
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, ...env } });
  const waiting = new Map();
  let buffer = "";
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
      const message = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      waiting.get(message.id)?.({ message, sinceSpawnMs: performance.now() - spawnedAt });
    }
  });
  let nextId = 1;
  return {
    pid: child.pid,
    request(method, params = {}) {
      const id = nextId++;
      const answered = new Promise((resolve) => waiting.set(id, resolve));
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      return answered;
    },
    notify(method) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`);
    },
    async stop() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
    /** Ends it as a client would (a signal, or closing its stdin); resolves with the ms until it exited. */
    async end(how) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      const endedAt = performance.now();
      if (how === "stdin") child.stdin.end();
      else child.kill(how);
      await exited;
      return performance.now() - endedAt;
    },
  };
}

/** A TCP port nothing listens on now, on the loopback. */
export async function freePort() {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** server-everything over Streamable HTTP on `port`, at /mcp; resolves with its process once it listens. */
export async function startEverythingHttp(port) {
  const server = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  server.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
  const deadline = Date.now() + 20_000;
  while (!stderr.includes(`port ${port}`)) {
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`server-everything did not listen on ${port}: ${stderr.slice(-500)}`);
    await delay(50);
  }
  return server;
}

/**
 * The SDK's client over Streamable HTTP hands every fetch the transport's one signal, and fetch lets go of its
 * listener on it only when the request is collected: past 1,500 calls each one prints a MaxListenersExceededWarning.
 * From now on they are counted, not printed; the returned function reads the count.
 */
export function countListenerWarnings() {
  let count = 0;
  process.removeAllListeners("warning");
  process.on("warning", (warning) => {
    if (warning.name === "MaxListenersExceededWarning") count++;
    else process.stderr.write(`${warning.name}: ${warning.message}\n`);
  });
  return () => count;
}

/**
 * An SDK client over Streamable HTTP (as `{ label, client }`, what echoCaller takes), connected once the server at
 * `url` answers; tried again every 100 ms until `exited()` says the server is gone or `waitMs` have passed.
 */
export async function connectHttp(url, label, exited, waitMs = 20_000) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const client = new Client({ name: "gaggle-bench", version: "0" }, { capabilities: {} });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      return { label, client };
    } catch (error) {
      await client.close().catch(() => {});
      if (exited() || Date.now() > deadline) throw new Error(`${label} did not answer at ${url}: ${error.message}`, { cause: error });
      await delay(100);
    }
  }
}
