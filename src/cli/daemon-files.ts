// Where the daemon of one config lives in the state dir: its socket, its record (pid, admin URL), its lock and its
// log, all named by its key, which only a gaggle of the same program and the same expanded config shares.
import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stateDir, type GaggleConfig } from "../config/index.js";
import { writeFileAtomic } from "../shared/atomic-file.js";
import { isObject } from "../shared/json.js";
import { GAGGLE_VERSION } from "../shared/version.js";

export interface DaemonPlace {
  key: string;
  /** The folder of every daemon of this state dir: only its user may open it. */
  dir: string;
  socket: string;
  /** The running daemon's record (DaemonRecord), written once it listens. */
  record: string;
  /** Held (created exclusively, holding the pid) by the one daemon of this key. */
  lock: string;
  log: string;
}

/** What a running daemon records of itself, for relays, `gaggle stop` and `gaggle status`. */
export interface DaemonRecord {
  pid: number;
  key: string;
  version: string;
  config: string;
  socket: string;
  /** The admin listener's status page (with /api/status beside it); null when gateway.admin = false. */
  admin_url: string | null;
  started_at: string;
}

/** A unix socket's path must fit in sockaddr_un (108 bytes on Linux, 104 on macOS). */
const SOCKET_PATH_MAX = 100;

/**
 * The key names the program and what the config expands to: another gaggle version or build, another file, or
 * another value reaching a ${VAR} makes another key, so a daemon is only ever shared by clients it serves as
 * they would serve themselves.
 */
export function daemonKey(config: GaggleConfig, program = process.argv[1]): string {
  const hash = createHash("sha256").update(GAGGLE_VERSION).update("\0").update(programIdentity(program)).update("\0").update(JSON.stringify(config));
  return hash.digest("hex").slice(0, 16);
}

function programIdentity(program: string | undefined): string {
  if (program === undefined) return "";
  try {
    const real = realpathSync(program);
    return `${real}@${statSync(real).mtimeMs}`;
  } catch {
    return program;
  }
}

export function daemonPlace(config: GaggleConfig, key = daemonKey(config), env: NodeJS.ProcessEnv = process.env): DaemonPlace {
  const dir = join(stateDir(config, env), "daemon");
  const socketDir = join(dir, `${key}.sock`).length <= SOCKET_PATH_MAX ? dir : join(tmpdir(), `gaggle-${process.getuid?.() ?? "user"}`);
  return {
    key,
    dir,
    socket: join(socketDir, `${key}.sock`),
    record: join(dir, `${key}.json`),
    lock: join(dir, `${key}.lock`),
    log: join(dir, `${key}.log`),
  };
}

/** Makes the daemon folder (and the socket's, when apart) that only this user may open. */
export function makePrivateDirs(place: DaemonPlace): void {
  for (const dir of new Set([place.dir, join(place.socket, "..")])) mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** The record of the daemon of `place`, if one is written and its process lives. */
export function readRecord(place: Pick<DaemonPlace, "record">): DaemonRecord | undefined {
  try {
    const record: unknown = JSON.parse(readFileSync(place.record, "utf8"));
    if (!isObject(record) || typeof record.pid !== "number" || !alive(record.pid)) return undefined;
    return record as unknown as DaemonRecord;
  } catch {
    return undefined;
  }
}

export function writeRecord(place: DaemonPlace, record: DaemonRecord): void {
  writeFileAtomic(place.record, JSON.stringify(record, null, 2), { mode: 0o600 });
}

/**
 * Takes the lock of `place` for this process: false when a live daemon holds it. A lock left by a process that is
 * gone is taken over.
 */
export function takeLock(place: DaemonPlace): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(place.lock, "wx", 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readText(place.lock));
      if (Number.isInteger(holder) && holder > 0 && alive(holder)) return false;
      rmSync(place.lock, { force: true });
    }
  }
  return false;
}

/** Removes what the daemon of `place` left: its socket, record and lock. */
export function clearPlace(place: DaemonPlace): void {
  for (const path of [place.socket, place.record, place.lock]) rmSync(path, { force: true });
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return "";
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
