// Owns the chaos run's look at /proc: a mark in the environment of everything an attack starts, the processes that
// still carry it once gaggle is gone (orphans), and the peak resident memory of a gaggle while it runs.
import { readFileSync, readdirSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { isAlive, memoryOf } from "../../bench/procs.mjs";

export { isAlive };

/** The name of the variable every process an attack starts inherits; its value names the attack and this run. */
export const MARK_VARIABLE = "GAGGLE_CHAOS_MARK";

let marks = 0;
export function newMark(attack) {
  return `${attack}-${process.pid}-${++marks}`;
}

/** Live processes whose environment carries `mark`, with their command lines. */
export function carrying(mark) {
  const entry = Buffer.from(`${MARK_VARIABLE}=${mark}\0`);
  const found = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    try {
      if (!readFileSync(`/proc/${pid}/environ`).includes(entry) || !isAlive(pid)) continue;
      found.push({ pid, command: readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim().slice(0, 160) });
    } catch {
      // Ended while we looked, or not ours to read.
    }
  }
  return found;
}

/**
 * Waits up to `ms` for every process carrying `mark` to go, then SIGKILLs the survivors so that one attack's
 * leftovers never weigh on the next; resolves with the survivors (the orphans).
 */
export async function orphansOf(mark, ms) {
  const deadline = Date.now() + ms;
  let left = carrying(mark);
  while (left.length > 0 && Date.now() < deadline) {
    await delay(100);
    left = carrying(mark);
  }
  for (const { pid } of left) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone at last
    }
  }
  return left;
}

/** Reads a process's resident memory every `everyMs`; `stop()` resolves with the peak seen (VmHWM at the last read), in KiB. */
export function watchMemory(pid, everyMs = 250) {
  let peakKiB = 0;
  const read = () => {
    try {
      const { rssKiB, peakKiB: hwm } = memoryOf(pid);
      peakKiB = Math.max(peakKiB, rssKiB, hwm);
    } catch {
      // The process has exited: its last reading stands.
    }
  };
  read();
  const timer = setInterval(read, everyMs);
  return {
    peakKiB: () => peakKiB,
    stop() {
      read();
      clearInterval(timer);
      return peakKiB;
    },
  };
}

/** SIGKILLs whatever still carries a mark of this run (any attack's): the run's last clean-up; resolves with how many. */
export function killRunLeftovers() {
  const ours = new RegExp(`(?:^|\\0)${MARK_VARIABLE}=[^\\0]*-${process.pid}-\\d+(?:\\0|$)`);
  let killed = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!ours.test(readFileSync(`/proc/${name}/environ`, "latin1"))) continue;
      process.kill(Number(name), "SIGKILL");
      killed++;
    } catch {
      // ended while we looked, or not ours to read
    }
  }
  return killed;
}
