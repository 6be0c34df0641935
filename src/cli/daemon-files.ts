// Where the daemon of one config lives in the default state dir: its socket, its record (pid, admin URL), its lock
// and its log, all named by its key (see daemon-key.ts).
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "../children/processes/process-tree.js";
import { writeFileAtomic } from "../shared/atomic-file.js";
import { isObject } from "../shared/json.js";
import { daemonDir, daemonKeyOf } from "./daemon-key.js";

export interface DaemonPlace {
  key: string;
  /** The folder of every daemon of this user: only the user may open it. */
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
  /** The bearer token the admin listener takes (the record is readable by its user alone). */
  admin_token: string | null;
  started_at: string;
}

/** A unix socket's path must fit in sockaddr_un (108 bytes on Linux, 104 on macOS). */
const SOCKET_PATH_MAX = 100;

export function daemonPlace(key: string, env: NodeJS.ProcessEnv = process.env): DaemonPlace {
  const dir = daemonDir(env);
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

/** The place of the daemon of the config file at `configPath` as it reads now (for gaggle stop, status, logs). */
export function placeOfFile(configPath: string, env: NodeJS.ProcessEnv = process.env): DaemonPlace {
  let text = "";
  try {
    text = readFileSync(configPath, "utf8");
  } catch {
    // A file that cannot be read has the key of an empty one: no daemon is found for it.
  }
  return daemonPlace(daemonKeyOf(configPath, text, env), env);
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

/**
 * The records of every live daemon serving the config file at `configPath`, whatever its key: one started by another
 * build of gaggle, or with other values reaching the config's `${VAR}`s, has a key of its own.
 */
export function recordsOfConfig(configPath: string, env: NodeJS.ProcessEnv = process.env): DaemonRecord[] {
  const dir = daemonDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".json"));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const record = readRecord({ record: join(dir, name) });
    return record?.config === configPath ? [record] : [];
  });
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

/** The daemon of a record or lock runs: a daemon that exited and waits to be reaped does not. */
export function alive(pid: number): boolean {
  return processAlive(pid);
}
