// Process checks for lifecycle tests: is a pid alive (zombies count as dead), and wait for one to go.
import { readFileSync, readdirSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";

export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The state follows the parenthesised command name, which may itself contain spaces or parentheses.
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** Polls until every pid is gone; resolves with the ones still alive after `ms`. */
export async function waitGone(pids: number[], ms = 10_000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await delay(50);
    alive = alive.filter(isAlive);
  }
  return alive;
}

/** The live processes of a process group, found through /proc: a group's leader may be gone while members stay. */
export function groupMembers(pgid: number): number[] {
  return readdirNumeric("/proc").filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X";
    } catch {
      return false;
    }
  });
}

/** Every descendant of `pid`, found through /proc: what a process started, and what those started. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirNumeric("/proc")) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), entry]);
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return found;
}

/** The process group of `pid`, from /proc. */
export function groupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

/**
 * The live processes whose environment holds `entry` ("NAME=value"): a test that starts gaggle with a mark of
 * its own finds everything gaggle started, even what left its process group, and can end it after a failure.
 */
export function carrying(entry: string): number[] {
  return readdirNumeric("/proc").filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`).includes(`${entry}\0`) && isAlive(pid);
    } catch {
      return false; // ended while we looked, or not ours to read
    }
  });
}

/** SIGKILLs every process `carrying(entry)`: a test's clean-up, whatever the test left behind. */
export function killCarrying(entry: string): void {
  for (const pid of carrying(entry)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
}

/** The watchdogs (src/children/processes/reaper.ts) among the processes `pid` started. */
export function watchdogsOf(pid: number): number[] {
  return descendants(pid).filter(isWatchdog);
}

export function isWatchdog(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("gaggle-reaper");
  } catch {
    return false;
  }
}

function readdirNumeric(dir: string): number[] {
  return readdirSync(dir)
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}
