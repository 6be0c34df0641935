// Child processes of the conformance run. Each one leads its own process group, so stopping it also stops
// whatever it started (gaggle's children, the suite's mock servers); every group is stopped on the way out,
// on success, error or signal.
import { spawn } from "node:child_process";

const running = new Set();

/** Starts `command` in a new process group; stdout and stderr are kept for the caller (`child.output()`). */
export function start(command, args, options = {}) {
  const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk) => {
    output += chunk;
    child.emit("output", output);
  };
  child.stdout.setEncoding("utf8").on("data", keep);
  child.stderr.setEncoding("utf8").on("data", keep);
  child.output = () => output;
  child.exited = new Promise((resolve) => child.once("close", (code, signal) => resolve(code ?? signal)));
  running.add(child);
  void child.exited.then(() => running.delete(child));
  return child;
}

/** Runs `command` to completion; resolves with its exit code (or the signal that ended it) and its output. */
export async function run(command, args, options = {}) {
  const child = start(command, args, options);
  const code = await child.exited;
  return { code, output: child.output() };
}

/** Resolves with the match once the process's output matches `pattern`; rejects if it exits or takes too long. */
export function waitForOutput(child, pattern, timeoutMs = 15_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`no ${pattern} within ${timeoutMs} ms`), timeoutMs);
    const check = (output) => {
      const match = pattern.exec(output);
      if (match === null) return;
      clearTimeout(timer);
      child.off("output", check);
      resolve(match);
    };
    function fail(why) {
      child.off("output", check);
      reject(new Error(`${child.spawnargs.join(" ")}: ${why}\n${child.output().slice(-2000)}`));
    }
    child.on("output", check);
    void child.exited.then((code) => fail(`exited (${code}) before printing ${pattern}`));
    check(child.output());
  });
}

function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Stops every process group still running: SIGTERM, then SIGKILL for those still there after `graceMs`. */
export async function stopAll(graceMs = 3000) {
  const children = [...running];
  for (const child of children) signalGroup(child, "SIGTERM");
  const timeout = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
  await Promise.race([Promise.all(children.map((child) => child.exited)), timeout]);
  for (const child of children) signalGroup(child, "SIGKILL");
}

/** The last resort when the process exits without stopAll(): kill what is left, synchronously. */
process.on("exit", () => {
  for (const child of running) signalGroup(child, "SIGKILL");
});
