// The lock of one token file's refresh, shared by every gaggle process that signs in with that file (a gateway or
// daemon, `gaggle call` beside it, a second standalone gaggle, `gaggle auth`): a file beside the token file, made
// only where there is none (O_EXCL), naming its holder. An authorization server that rotates refresh tokens takes a
// refresh token used twice for a stolen one and revokes the whole grant (RFC 9700 section 4.14); under this lock one
// process refreshes, and the others read what it saved.
//
// Waiting polls the file without blocking the event loop. A lock is stale, and is taken over, once its holder is
// gone or it is older than STALE_MS: a live holder gives up its refresh's requests after REFRESH_TIMEOUT_MS, so only a
// holder stuck elsewhere (a hung disk) keeps it that long, and past that bound the waiter's refresh goes ahead.
import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { link, mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { processAlive } from "../processes/process-tree.js";

/** How long the requests of a refresh made under the lock may take, together; past it they are given up. */
export const REFRESH_TIMEOUT_MS = 30_000;

/** A lock older than this is stale whoever holds it: well past REFRESH_TIMEOUT_MS. */
export const STALE_MS = 4 * REFRESH_TIMEOUT_MS;

/** How often a waiter looks at the lock again. */
const POLL_MS = 50;

/** What a lock file holds. `since` is when it was taken (ms since the epoch). */
export interface LockHolder {
  pid: number;
  since: number;
  /** Tells this taking of the lock from any other, so that a holder removes only its own. */
  nonce: string;
}

/** The locks this process holds, with the text it wrote into each: removed at exit if still held. */
const held = new Map<string, string>();

/**
 * Runs `work` holding the lock file `lock`, once any other holder has released it (or left it stale); the lock is
 * released however `work` ends. `onWait` is told the holder the first time the lock is found taken (undefined when
 * its file is still being written or is damaged).
 */
export async function withLock<T>(lock: string, work: () => Promise<T>, onWait?: (holder: LockHolder | undefined) => void): Promise<T> {
  const mine = await acquire(lock, onWait);
  try {
    return await work();
  } finally {
    await release(lock, mine);
  }
}

async function acquire(lock: string, onWait?: (holder: LockHolder | undefined) => void): Promise<string> {
  await mkdir(dirname(lock), { recursive: true, mode: 0o700 });
  let told = false;
  for (;;) {
    const mine = JSON.stringify({ pid: process.pid, since: Date.now(), nonce: randomUUID() } satisfies LockHolder);
    if (await create(lock, mine)) return mine;
    const found = await readHolder(lock);
    if (found === undefined) continue;
    if (stale(found)) {
      await takeOver(lock, found.text);
      continue;
    }
    if (!told) onWait?.(found.holder);
    told = true;
    await delay(POLL_MS);
  }
}

/** Makes the lock file with `text`, unless there is one: false then. */
async function create(lock: string, text: string): Promise<boolean> {
  const handle = await open(lock, "wx", 0o600).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "EEXIST") return undefined;
    throw error;
  });
  if (handle === undefined) return false;
  held.set(lock, text);
  releaseAtExit();
  try {
    await handle.writeFile(text);
  } catch (error) {
    held.delete(lock);
    await rm(lock, { force: true });
    throw error;
  } finally {
    await handle.close();
  }
  return true;
}

/** The lock's holder and text, with its age; undefined when there is no lock. */
async function readHolder(lock: string): Promise<{ holder: LockHolder | undefined; text: string; since: number } | undefined> {
  const [text, since] = await Promise.all([readFile(lock, "utf8"), stat(lock).then((stats) => stats.mtimeMs)]).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [undefined, 0] as const;
      throw error;
    },
  );
  if (text === undefined) return undefined;
  const holder = parseHolder(text);
  return { holder, text, since: holder?.since ?? since };
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<LockHolder>;
    const { pid, since, nonce } = parsed;
    return Number.isInteger(pid) && pid! > 0 && typeof since === "number" && typeof nonce === "string" ? { pid: pid!, since, nonce } : undefined;
  } catch {
    // Being written, or left half-written: its age decides.
    return undefined;
  }
}

/** The holder is gone, or the lock is older than any refresh takes. */
function stale({ holder, since }: { holder: LockHolder | undefined; since: number }): boolean {
  return (holder !== undefined && !processAlive(holder.pid)) || Date.now() - since > STALE_MS;
}

/**
 * Removes the stale lock whose text is `staleText`. It is first moved aside, atomically, and looked at there: a lock
 * another waiter took over since it was read is put back (unless yet another took its place), not removed.
 */
async function takeOver(lock: string, staleText: string): Promise<void> {
  const aside = `${lock}.${randomUUID()}.stale`;
  try {
    await rename(lock, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    if ((await readFile(aside, "utf8")) !== staleText) await link(aside, lock).catch(() => {});
  } finally {
    await rm(aside, { force: true });
  }
}

/** Removes the lock if it is still this taking of it (one taken over as stale is another's now). */
async function release(lock: string, mine: string): Promise<void> {
  held.delete(lock);
  const text = await readFile(lock, "utf8").catch(() => undefined);
  if (text === mine) await rm(lock, { force: true });
}

let exitHook = false;

/** A lock held when the process exits is removed; one left by a process killed outright is stale, its holder gone. */
function releaseAtExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const [lock, mine] of held) {
      try {
        /* eslint-disable no-restricted-syntax -- synchronous: an exit listener cannot wait. */
        if (readFileSync(lock, "utf8") === mine) rmSync(lock, { force: true });
        /* eslint-enable no-restricted-syntax */
      } catch {
        // Gone already.
      }
    }
  });
}
