// Holds a process's stats of one path, as a hung mount would, until the test lets them go: strace, attached to the
// process, stops each stat of that path as it begins; killing strace lets every held one run on as if nothing had
// happened. A start that looks for its command there is held just after it passed its first checks. Without seccomp:
// a seccomp filter would outlive strace and fail those calls once it is gone, rather than let them run.
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, readSync, readdirSync } from "node:fs";
import { until } from "./poll.js";

/** Longer than any test runs (µs): a held stat is let go by `letGo`, never by its time running out. */
const HELD_US = 300_000_000;

/** The stat calls, by number, and which argument holds the path: Linux's syscall table of this machine's architecture. */
const STAT_CALLS: Record<string, Record<number, number>> = {
  // stat, lstat, newfstatat, statx
  x64: { 4: 0, 6: 0, 262: 1, 332: 1 },
  // newfstatat, statx
  arm64: { 79: 1, 291: 1 },
};

/**
 * Holds `pid`'s stats of `path` from now on: strace attaches to each of its threads (and follows those it starts, and
 * its children), and resolves once every thread is held to it. Attached, not started under it: strace would kill
 * what it started as it died, and its end would close the stdio it shares with the process.
 */
export async function holdStats(pid: number, path: string): Promise<StatHold> {
  const calls = "stat,lstat,newfstatat,statx";
  const strace = spawn(
    "strace",
    ["-f", "-qq", "-p", String(pid), "-e", `trace=${calls}`, "-P", path, "-e", `inject=${calls}:delay_enter=${HELD_US}`, "-o", "/dev/null"],
    { stdio: "ignore" },
  );
  const stracePid = strace.pid!;
  const exited = new Promise<never>((_resolve, reject) =>
    strace.once("exit", (code) => reject(new Error(`strace ended (${code}) before it held ${pid}`))),
  );
  exited.catch(() => undefined);
  await Promise.race([
    exited,
    until(
      () => tracers(pid),
      (found) => found.length > 0 && found.every((tracer) => tracer === stracePid),
    ),
  ]);
  return {
    held: () => heldStats(pid, path),
    letGo: () => {
      strace.removeAllListeners("exit");
      if (strace.exitCode === null && strace.signalCode === null) process.kill(stracePid, "SIGKILL");
    },
  };
}

/** A hold on one process's stats of one path. */
export interface StatHold {
  /** How many of its threads are held in a stat of the path now. */
  held(): number;
  /** Lets every held stat run on: strace, killed, lets go of the process, which goes on with nothing traced. Again: nothing. */
  letGo(): void;
}

/** The tracer of each thread of `pid` (0: none). */
function tracers(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) => {
    try {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, "utf8");
      return [Number(/^TracerPid:\s*(\d+)/m.exec(status)?.[1])];
    } catch {
      return [];
    }
  });
}

/** How many threads of `pid` are held in a stat of `path`. */
function heldStats(pid: number, path: string): number {
  const calls = STAT_CALLS[process.arch];
  if (!calls) throw new Error(`no table of stat calls for ${process.arch}`);
  let held = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      // Stopped by its tracer ("t"), in a call whose number and arguments /proc shows.
      if (!stat.slice(stat.lastIndexOf(")") + 2).startsWith("t")) continue;
      const [number, ...args] = readFileSync(`/proc/${pid}/task/${task}/syscall`, "utf8").trim().split(" ");
      const at = calls[Number(number)];
      if (at !== undefined && readPath(pid, BigInt(args[at]!), path)) held++;
    } catch {
      // The thread ended, or ran on, while we looked.
    }
  }
  return held;
}

/** Whether the string at `address` in `pid`'s memory is `path`. */
function readPath(pid: number, address: bigint, path: string): boolean {
  const expected = Buffer.from(`${path}\0`);
  const found = Buffer.alloc(expected.length);
  const mem = openSync(`/proc/${pid}/mem`, "r");
  try {
    readSync(mem, found, 0, found.length, address);
  } finally {
    closeSync(mem);
  }
  return found.equals(expected);
}
