// Process groups: every stdio child leads its own group, and shutdown escalates over the whole group.
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";

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

const POLL_MS = 25;

/**
 * Resolves true once the group is empty, false if it is still alive after `ms`.
 * The poll timer is deliberately ref'd: during shutdown it may be all that keeps gaggle alive until its
 * children are gone, and an unref'd one would let Node exit with the group still running.
 */
export async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
  return true;
}

/**
 * SIGTERM the group, wait up to `graceMs` for every member to go, then SIGKILL what is left.
 * Members that outlive their leader (grandchildren) are reached too, since they keep the group id.
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, "SIGTERM");
  if (await waitGroupGone(pgid, graceMs)) return;
  signalGroup(pgid, "SIGKILL");
  await waitGroupGone(pgid, 1000);
}
