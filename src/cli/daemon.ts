// The daemon: the one gaggle every stdio client of one person and one config shares, through relays on a local
// socket. Its children, catalog and background work outlive any one client; it stops when idle or told to.
import { randomBytes } from "node:crypto";
import { existsSync, renameSync, rmSync } from "node:fs";
import { LOCAL_PRINCIPAL } from "../children/child.js";
import { rename, stat } from "node:fs/promises";
import { bearerTokens, type GaggleConfig } from "../config/index.js";
import type { Gaggle } from "../gateway/gaggle.js";
import { ModernServer } from "../gateway/modern/modern-server.js";
import { GatewayRequests } from "../gateway/requests.js";
import { lazyLogger, logToFile, reopenLog } from "../shared/log.js";
import { GAGGLE_VERSION } from "../shared/version.js";
import { createGaggleWithListener } from "../transport/members-listener.js";
import { serveSocket } from "../transport/socket-listener.js";
import type { AdminListener } from "../transport/admin/admin-listener.js";
import { daemonKeyOf } from "./daemon-key.js";
import { clearPlace, daemonPlace, makePrivateDirs, takeLock, writeRecord, type DaemonPlace, type DaemonRecord } from "./daemon-files.js";
import { ConfigStanding } from "./reload.js";
import { follow, openObservatory, startAdmin, statusExtras, stopOnce, type ServeOptions } from "./serve.js";

const log = lazyLogger({ subsystem: "daemon" });

/** A log past this size is moved aside (one old log is kept beside it) and a new one begun. */
const LOG_MAX_BYTES = 10 * 1024 * 1024;
const LOG_CHECK_MS = 10 * 60_000;

/** Work that keeps an idle daemon running: a process or a gosling still working, an agent still serving. */
const BUSY_STATES = new Set(["running", "working", "starting"]);

/**
 * Serves `config` as the daemon of its key. When another live daemon holds the key (two relays started one at
 * once), this one exits at once and the relays reach the other.
 */
export async function serveDaemon(config: GaggleConfig, key: string, options: ServeOptions = {}): Promise<void> {
  let place = daemonPlace(key);
  makePrivateDirs(place);
  if (!takeLock(place)) return;
  await rotateLog(place.log);
  logToFile(place.log);
  const startedAt = new Date();
  // The admin listener is on by default (loopback, a free port): `gaggle status` reads the daemon's live state there.
  const adminAddress = config.gateway.admin === false ? undefined : (config.gateway.admin ?? { host: "127.0.0.1", port: 0 });
  const observatory = await openObservatory(config, adminAddress !== undefined);
  const standing = new ConfigStanding(options.problem);
  // Without tokens of the config's own, the daemon makes one: a loopback port is open to every user of the machine,
  // the socket only to this one, and the record that holds the token is this user's alone. Made once, it stays
  // while the config in force names none.
  const own = { [LOCAL_PRINCIPAL]: randomBytes(24).toString("hex") };
  const tokensOf = (inForce: GaggleConfig) => {
    const configured = bearerTokens(inForce);
    return Object.keys(configured).length > 0 ? configured : own;
  };
  let admin: AdminListener | undefined;
  let recorded = false;
  const idle = new IdleStop(
    config.gateway.daemonIdleMs,
    () => busy(gaggle),
    () => void stop("idle"),
  );
  const { gaggle, members } = createGaggleWithListener(
    config,
    observatory,
    () => standing.errors(),
    (inForce) => {
      idle.follow(inForce.gateway.daemonIdleMs);
      if (!admin) return;
      const tokens = tokensOf(inForce);
      const problem = admin.useTokens(tokens);
      if (problem) return log.error(`the admin listener keeps the bearer tokens in force: ${problem}`);
      // `gaggle status` reads the admin listener with the token the record holds.
      record.admin_token = Object.values(tokens)[0] ?? null;
      if (recorded) writeRecord(place, record);
    },
  );
  observatory.attach(gaggle);
  // The daemon is the one of the file's text, loaded or not: a client that starts while an edit does not load
  // reaches it, and is served the config in force with the edit's errors, rather than a daemon of no children.
  const reloader = follow(gaggle, standing, options, "daemon", (text) => {
    place = moveToKey(place, daemonPlace(daemonKeyOf(config.path, text, process.env)), record);
  });
  const extras = { ...statusExtras(standing), startedAt };
  const tokens = tokensOf(gaggle.config);
  admin = adminAddress ? await startAdmin(gaggle, observatory, adminAddress, extras, tokens) : undefined;
  const record: DaemonRecord = {
    pid: process.pid,
    key: place.key,
    version: GAGGLE_VERSION,
    config: config.path,
    socket: place.socket,
    admin_url: admin?.url ?? null,
    admin_token: admin ? (Object.values(tokens)[0] ?? null) : null,
    started_at: startedAt.toISOString(),
  };
  const modern = new ModernServer(gaggle, new GatewayRequests(gaggle));
  const listener = await serveSocket(gaggle, modern, place.socket, (clients) => idle.clients(clients));
  // Written once the socket it names is served.
  writeRecord(place, record);
  recorded = true;
  const rotation = setInterval(() => void rotateLog(place.log).then((moved) => moved && reopenLog()), LOG_CHECK_MS).unref();
  const stop = stopOnce(
    gaggle,
    async () => {
      clearInterval(rotation);
      idle.clients(1);
      reloader.close();
      modern.endListens();
      clearPlace(place);
      await listener.close();
      await admin?.close();
    },
    async () => {
      await members.close();
      await observatory.close();
    },
  );
  log.info(
    { config: config.path, key: place.key, socket: place.socket, admin: record.admin_url, children: gaggle.router.names() },
    "gaggle daemon serving",
  );
  idle.clients(listener.clients);
  gaggle.startEager();
}

/**
 * After an edit the daemon serves the edited file (its config, or the one in force with the edit's errors): it
 * moves to that text's key, so relays of the edited file find it. When a daemon of that key runs already, this one
 * keeps its own (and stops once idle).
 */
function moveToKey(from: DaemonPlace, to: DaemonPlace, record: DaemonRecord): DaemonPlace {
  if (from.key === to.key || !takeLock(to)) return from;
  try {
    renameSync(from.socket, to.socket);
  } catch (error) {
    log.warn({ err: error, key: to.key }, "could not move the socket to the edited config's key");
    rmSync(to.lock, { force: true });
    return from;
  }
  Object.assign(record, { key: to.key, socket: to.socket });
  writeRecord(to, record);
  for (const left of [from.record, from.lock]) rmSync(left, { force: true });
  const moved = { ...to, log: moveLog(from.log, to.log) };
  log.info({ key: to.key, log: moved.log }, "daemon moved to the edited config's key");
  return moved;
}

/**
 * The log goes with the daemon to its new key, where `gaggle status`, `gaggle logs` and relays look for it; a log an
 * earlier daemon of that key left is kept as that key's old log. Returns where the log is now.
 */
function moveLog(from: string, to: string): string {
  try {
    if (existsSync(to)) renameSync(to, `${to}.1`);
    renameSync(from, to);
  } catch (error) {
    log.warn({ err: error, log: from }, "the log stays where it is: it could not be moved to the edited config's key");
    return from;
  }
  reopenLog(to);
  return to;
}

/** Whether any background work is still going, which a client may come back for. */
function busy(gaggle: Gaggle): boolean {
  return gaggle.router.all().some((child) => child.background().some((work) => BUSY_STATES.has(work.state)));
}

/** Stops the daemon once it has had no client and no background work for `ms`. */
class IdleStop {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private ms: number,
    private readonly busy: () => boolean,
    private readonly stop: () => void,
  ) {}

  clients(count: number): void {
    clearTimeout(this.timer);
    this.timer = count > 0 ? undefined : setTimeout(() => this.expire(), this.ms);
  }

  /** The wait of the config in force (see IN_PLACE in serve.ts); an idle wait under way begins again with it. */
  follow(ms: number): void {
    if (ms === this.ms) return;
    this.ms = ms;
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.expire(), this.ms);
  }

  private expire(): void {
    if (this.busy()) this.timer = setTimeout(() => this.expire(), this.ms);
    else this.stop();
  }
}

/** Moves a log past LOG_MAX_BYTES aside to `.1`; true when it did. */
async function rotateLog(file: string): Promise<boolean> {
  try {
    if ((await stat(file)).size < LOG_MAX_BYTES) return false;
    await rename(file, `${file}.1`);
    return true;
  } catch {
    return false;
  }
}
