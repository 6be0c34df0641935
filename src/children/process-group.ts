// Process groups: every stdio child leads its own group, and shutdown escalates over the whole group.
import { setTimeout as delay } from "node:timers/promises";

/** True while any process of the group exists (zombies included, which the kernel reaps shortly). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
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
