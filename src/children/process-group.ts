// Process trees: every child leads its own process group and marks its descendants with a token, and shutdown
// escalates over both, so that what left the group (setsid, a double fork) goes too.
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { tokenHolders } from "./child-token.js";

/** What a child started: the group it leads (the group id is its pid) and whatever carries its token. */
export interface ProcessTree {
  pgid: number;
  token: string;
}

/**
 * True while any live process of the group exists. Zombies do not count: they are dead, only not yet
 * reaped, and an init that reaps orphans slowly (as in many containers) would otherwise stretch every
 * shutdown wait to its limit.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  return process.platform !== "linux" || liveMembers(pgid);
}

/** A member of the group that is not a zombie: the leader, read first, or any other process in /proc. */
function liveMembers(pgid: number): boolean {
  // The leader is usually the member still running, and one read settles it; only without it is /proc scanned.
  if (liveMemberOf(String(pgid), pgid)) return true;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  return entries.some((entry) => entry.charCodeAt(0) <= 57 && liveMemberOf(entry, pgid));
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

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone, which is what the caller wants.
  }
}

/** A live member of the group, or a live process anywhere that carries the token. */
export function treeAlive(tree: ProcessTree): boolean {
  return groupAlive(tree.pgid) || tokenHolders(tree.token).length > 0;
}

export function signalTree(tree: ProcessTree, signal: NodeJS.Signals): void {
  signalGroup(tree.pgid, signal);
  for (const pid of tokenHolders(tree.token)) {
    try {
      process.kill(pid, signal);
    } catch {
      // It ended since the scan.
    }
  }
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
  if (!treeAlive(tree)) return;
  signalTree(tree, "SIGTERM");
  if (await waitTreeGone(tree, graceMs)) return;
  // SIGKILL again on every poll: a process forked between a scan and its kill escapes one round, not the next.
  const deadline = Date.now() + KILL_WAIT_MS;
  while (treeAlive(tree) && Date.now() < deadline) {
    signalTree(tree, "SIGKILL");
    await delay(POLL_MS);
  }
}
