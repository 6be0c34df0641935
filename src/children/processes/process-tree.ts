// Process trees: every child leads its own process group and marks its descendants with a token, and shutdown
// escalates over both, so that what left the group (setsid, a double fork) goes too.
/* eslint-disable no-restricted-syntax -- synchronous: /proc answers from kernel memory and never waits on a disk. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { holdsToken } from "./child-token.js";

/** What a child started: the group it leads (the group id is its pid) and whatever carries its token. */
export interface ProcessTree {
  pgid: number;
  token: string;
}

/** The entries of /proc that are processes; undefined where there is no /proc to read. */
function procPids(): string[] | undefined {
  try {
    return readdirSync("/proc").filter((entry) => entry.charCodeAt(0) <= 57);
  } catch {
    return undefined;
  }
}

/** True while the kernel still knows the group: it may hold only zombies. */
function groupSignalable(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The kernel knows no process of the group any longer (zombies count as members): its id may be reused. */
export function groupGone(pgid: number): boolean {
  return !groupSignalable(pgid);
}

function liveMemberOf(pid: string, pgid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised name: state, ppid, pgrp, ...
    const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(group) === pgid && state !== "Z" && state !== "X";
  } catch {
    return false; // no such process, or it ended while we looked
  }
}

/** What one look at a tree found: a live member of its group is left, and the live processes carrying its token. */
interface TreeScan {
  group: boolean;
  holders: number[];
}

function scanAlive(scan: TreeScan): boolean {
  return scan.group || scan.holders.length > 0;
}

/**
 * One look at the tree, one pass over /proc at most. Zombies do not count: they are dead, only not yet reaped,
 * and an init that reaps orphans slowly (as in many containers) would otherwise stretch every shutdown wait to
 * its limit. The group's leader is usually the member still running, and one read settles it; the pass reads
 * every process's environment for the token, and its stat for the group only while no live member is found.
 * With `all` false the look ends at the first live process: what it found tells alive from gone, no more.
 */
function scanTree(tree: ProcessTree, all: boolean): TreeScan {
  const signalable = groupSignalable(tree.pgid);
  // Off Linux there is no stat to tell a zombie by: a group that takes a signal is alive.
  let group = signalable && (process.platform !== "linux" || liveMemberOf(String(tree.pgid), tree.pgid));
  const holders: number[] = [];
  if (group && !all) return { group, holders };
  const pids = procPids();
  if (pids === undefined) return { group: signalable, holders };
  for (const pid of pids) {
    if (holdsToken(pid, tree.token)) holders.push(Number(pid));
    else if (signalable && !group && liveMemberOf(pid, tree.pgid)) group = true;
    else continue;
    if (!all) break;
  }
  return { group, holders };
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone, which is what the caller wants.
  }
}

/** Signals the group, and every process the scan found carrying the token. */
function signalScanned(tree: ProcessTree, scan: TreeScan, signal: NodeJS.Signals): void {
  signalGroup(tree.pgid, signal);
  for (const pid of scan.holders) {
    try {
      process.kill(pid, signal);
    } catch {
      // It ended since the scan.
    }
  }
}

/**
 * How many live processes `trees` hold: members of their groups, and processes anywhere carrying one of their
 * tokens, each counted once. One pass over /proc (each process's stat, and its environment only when its group
 * is none of theirs); undefined where there is no /proc to read.
 */
export function countTrees(trees: readonly ProcessTree[]): number | undefined {
  if (trees.length === 0) return 0;
  const pids = procPids();
  if (pids === undefined) return undefined;
  const groups = new Set(trees.map((tree) => tree.pgid));
  let count = 0;
  for (const pid of pids) {
    const member = liveGroupOf(pid);
    if (member === undefined) continue;
    if (groups.has(member) || trees.some((tree) => holdsToken(pid, tree.token))) count++;
  }
  return count;
}

/** The group of live process `pid`; undefined for a zombie, or a process that ended while we looked. */
function liveGroupOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return state === "Z" || state === "X" ? undefined : Number(group);
  } catch {
    return undefined;
  }
}

/**
 * The process runs: it takes a signal and, where /proc tells, is no zombie. A zombie has exited and waits only to
 * be reaped, which an init that reaps orphans slowly (as in many containers) may put off for a second or more.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  // Without /proc (a sandbox that does not mount it) the signal's answer is all there is.
  return process.platform !== "linux" || liveGroupOf(String(pid)) !== undefined || !existsSync("/proc/self/stat");
}

/** A live member of the group, or a live process anywhere that carries the token. */
export function treeAlive(tree: ProcessTree): boolean {
  return scanAlive(scanTree(tree, false));
}

const POLL_MS = 25;

/**
 * Resolves true once the tree is gone, false if it is still alive after `ms`.
 * The poll timer is deliberately ref'd: during shutdown it may be all that keeps gaggle alive until its
 * children are gone, and an unref'd one would let Node exit with the group still running.
 */
export async function waitTreeGone(tree: ProcessTree, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (treeAlive(tree)) {
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
  return true;
}

/** After SIGKILL, how long the tree gets to be gone. */
const KILL_WAIT_MS = 1000;

/**
 * SIGTERM the tree, wait up to `graceMs` for every process to go, then SIGKILL what is left. Members that
 * outlive their leader keep the group id, and descendants that left the group keep the token: both are reached.
 */
export async function terminateTree(tree: ProcessTree, graceMs: number): Promise<void> {
  const scan = scanTree(tree, true);
  if (!scanAlive(scan)) return;
  signalScanned(tree, scan, "SIGTERM");
  if (await waitTreeGone(tree, graceMs)) return;
  // SIGKILL again on every poll: a process forked between a scan and its kill escapes one round, not the next.
  const deadline = Date.now() + KILL_WAIT_MS;
  while (Date.now() < deadline) {
    const scan = scanTree(tree, true);
    if (!scanAlive(scan)) return;
    signalScanned(tree, scan, "SIGKILL");
    await delay(POLL_MS);
  }
}
