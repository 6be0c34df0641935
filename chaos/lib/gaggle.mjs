// Owns the gaggles an attack runs: the built dist/cli.js on a temporary config, its stdio spoken in raw JSON-RPC
// lines (so nothing between the attack and gaggle tidies up what is sent), or its Streamable HTTP address.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { GAGGLE_CLI, ROOT } from "../../bench/procs.mjs";
import { MARK_VARIABLE } from "./procs.mjs";

export { GAGGLE_CLI, ROOT };
export const fixture = (name) => join(ROOT, "fixtures", name);

/** Shared by every gaggle of a run, so that each starts from V8's code cache rather than compiling again. */
const CODE_CACHE = mkdtempSync(join(tmpdir(), "gaggle-chaos-cache-"));
process.once("exit", () => rmSync(CODE_CACHE, { recursive: true, force: true }));

const STDERR_TAIL_LINES = 200;
const INITIALIZE = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "gaggle-chaos", version: "0" } };

/** A fresh folder for one attack's configs and state; `remove()` when done. */
export function workDir(attack) {
  const path = mkdtempSync(join(tmpdir(), `gaggle-chaos-${attack}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A gaggle config: gateway lines, then `[mcp_servers.NAME]` per child running a fixture with this Node; no built-in children. */
export function writeConfig(dir, file, { gateway = [], children = {} }) {
  const lines = ["[gateway]", 'log_level = "warn"', "shutdown_grace_ms = 500", ...gateway, ""];
  for (const name of ["process", "goose", "team"]) lines.push(`[virtual.${name}]`, "enabled = false", "");
  for (const [name, { script, extra = [] }] of Object.entries(children)) {
    lines.push(`[mcp_servers.${name}]`, `command = ${JSON.stringify(process.execPath)}`, `args = [${JSON.stringify(fixture(script))}]`, ...extra, "");
  }
  const path = join(dir, file);
  writeFileSync(path, lines.join("\n"));
  return path;
}

function spawnGaggle(config, mark, dir, args) {
  // Each round's gaggle runs alone, not through the daemon: its end is the round's end.
  const env = { ...process.env, [MARK_VARIABLE]: mark, XDG_STATE_HOME: join(dir, "state"), GAGGLE_CODE_CACHE: CODE_CACHE, GAGGLE_STANDALONE: "1" };
  const child = spawn(process.execPath, [GAGGLE_CLI, "--config", config, ...args], { stdio: ["pipe", "pipe", "pipe"], env });
  const tail = [];
  /** Error lines, and lines with a stack trace, by what they say (a log line's msg and err.message, cut short). */
  const log = { errors: 0, stacks: 0, stackMessages: new Map(), tail };
  let partial = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop();
    for (const line of lines) {
      if (/"level":(50|60)/.test(line)) log.errors++;
      if (line.includes('"stack"') || /^\s+at .+:\d+:\d+\)?$/.test(line)) {
        log.stacks++;
        const said = whatLogSays(line);
        log.stackMessages.set(said, (log.stackMessages.get(said) ?? 0) + 1);
      }
      tail.push(line);
    }
    tail.splice(0, Math.max(0, tail.length - STDERR_TAIL_LINES));
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  child.stdin.on("error", () => {}); // gaggle may be gone when an attack writes; its exit is what counts
  return { child, log, exited };
}

function whatLogSays(line) {
  try {
    const { msg, err } = JSON.parse(line);
    return `${msg ?? ""}${err?.message ? `: ${err.message}` : ""}`
      .replace(/[[{][^]*$/, "...")
      .replace(/\s+/g, " ")
      .slice(0, 100);
  } catch {
    return line.trim().slice(0, 100);
  }
}

/** Ends gaggle as asked ("stdin", or a signal's name) and waits for its exit; a gaggle that does not go is SIGKILLed. */
async function stopGaggle(child, exited, how, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return { ...(await exited), hungOnExit: false, ms: 0 };
  const started = Date.now();
  if (how === "stdin") child.stdin.end();
  else child.kill(how);
  const outcome = await Promise.race([exited, delay(ms, undefined, { ref: false })]);
  if (outcome) return { ...outcome, hungOnExit: false, ms: Date.now() - started };
  child.kill("SIGKILL");
  return { ...(await exited), hungOnExit: true, ms: Date.now() - started };
}

/**
 * gaggle serving stdio, spoken to in JSON-RPC lines. `request` resolves with the answer, or `{ hung: true }` after
 * `timeoutMs`; requests gaggle sends (sampling, roots, ...) are refused as a client without capabilities would.
 * Every response is counted by id in `answers`, matched or not, for attacks that send their own lines.
 */
export function startStdio({ config, mark, dir, args = [] }) {
  const { child, log, exited } = spawnGaggle(config, mark, dir, args);
  const pending = new Map();
  const answers = new Map();
  const output = { lines: 0, bytes: 0, notifications: 0, notJson: [] };
  let partial = "";
  let nextId = 1;
  const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
  child.stdout.setEncoding("utf8").on("data", (chunk) => {
    output.bytes += Buffer.byteLength(chunk);
    const lines = (partial + chunk).split("\n");
    partial = lines.pop();
    for (const line of lines) {
      output.lines++;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        if (output.notJson.length < 5) output.notJson.push(line.slice(0, 200));
        continue;
      }
      if (typeof message?.method === "string") {
        if (message.id === undefined) output.notifications++;
        else send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "the chaos client has no capabilities" } });
        continue;
      }
      answers.set(message?.id, (answers.get(message?.id) ?? 0) + 1);
      const waiter = pending.get(message?.id);
      if (waiter) {
        pending.delete(message.id);
        waiter(message);
      }
    }
  });
  const gaggle = {
    pid: child.pid,
    child,
    log,
    exited,
    answers,
    output,
    send,
    /** Writes raw text or bytes; resolves once the pipe takes more. */
    write: (data) => (child.stdin.write(data) ? Promise.resolve() : new Promise((resolve) => child.stdin.once("drain", resolve))),
    request(method, params, { id = `chaos-${nextId++}`, timeoutMs = 60_000 } = {}) {
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          resolve({ hung: true, id });
        }, timeoutMs);
        pending.set(id, (message) => {
          clearTimeout(timer);
          resolve(message);
        });
        send({ jsonrpc: "2.0", id, method, ...(params !== undefined && { params }) });
      });
    },
    /** A tools/call of a meta-tool, e.g. execute_child_tool. */
    call(name, args, options) {
      return gaggle.request("tools/call", { name, arguments: args }, options);
    },
    async initialize() {
      const answer = await gaggle.request("initialize", INITIALIZE, { timeoutMs: 30_000 });
      if (!answer.result) throw new Error(`gaggle did not initialize: ${JSON.stringify(answer).slice(0, 300)}\n${log.tail.join("\n")}`);
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
      return gaggle;
    },
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: (how = "stdin", ms = 15_000) => stopGaggle(child, exited, how, ms),
  };
  return gaggle;
}

/** gaggle serving Streamable HTTP on a free loopback port; resolves once it says where. */
export async function startHttp({ config, mark, dir }) {
  const { child, log, exited } = spawnGaggle(config, mark, dir, ["--http", "0"]);
  child.stdout.resume();
  const url = await new Promise((resolve, reject) => {
    // Runs after the tail has taken the chunk's lines (its listener was added first).
    const look = () => {
      const found = log.tail.map((line) => /serving MCP at (http:\/\/\S+)/.exec(line)).find(Boolean);
      if (!found) return;
      child.stderr.off("data", look);
      resolve(found[1].replace(/["\\].*$/, ""));
    };
    child.stderr.on("data", look);
    exited.then(({ code }) => reject(new Error(`gaggle exited (${code}) before listening:\n${log.tail.join("\n")}`)));
  });
  return {
    pid: child.pid,
    child,
    log,
    exited,
    url,
    port: Number(new URL(url).port),
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: (how = "SIGTERM", ms = 15_000) => stopGaggle(child, exited, how, ms),
  };
}
