// `gaggle` over stdio as a relay: bytes between the client's stdin/stdout and the daemon of its config, which it
// starts when none runs. The relay reads nothing of what passes; the daemon serves the connection as a stdio client.
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type { GaggleConfig } from "../config/index.js";
import { StartupError } from "../shared/errors.js";
import { daemonPlace, makePrivateDirs, type DaemonPlace } from "./daemon-files.js";
import { daemonKeyOf } from "./daemon-key.js";
import { pipeThrough, reach } from "./fast-relay.js";

/** How long a new daemon has to listen: it loads the config and opens its socket; children start after. */
const DAEMON_START_MS = 15_000;
const POLL_MS = 20;

/**
 * `text` is the config file's text as loaded (the key is made of it); `daemonArgs` are passed on to a daemon this
 * relay starts (a log level given on the command line).
 */
export async function relay(config: GaggleConfig, text: string, daemonArgs: string[] = []): Promise<void> {
  const place = daemonPlace(daemonKeyOf(config.path, text, process.env));
  pipeThrough((await reach(place.socket)) ?? (await startDaemon(config, place, daemonArgs)), place.log);
}

/**
 * Starts the daemon in a session of its own (a client's hang-up or Ctrl-C does not reach it), its stderr appended
 * to its log, and waits until it listens. A daemon that exits at once with 0 found another one of its key starting:
 * that one is waited for.
 */
async function startDaemon(config: GaggleConfig, place: DaemonPlace, daemonArgs: string[]): Promise<Socket> {
  makePrivateDirs(place);
  const log = openSync(place.log, "a", 0o600);
  const program = process.argv[1] ?? "gaggle";
  const daemon = spawn(process.execPath, [...process.execArgv, program, "--config", config.path, "--daemon", place.key, ...daemonArgs], {
    detached: true,
    stdio: ["ignore", "ignore", log],
    env: process.env,
  });
  closeSync(log);
  let exited: number | undefined;
  daemon.once("exit", (code) => (exited = code ?? 1));
  daemon.once("error", () => (exited = 1));
  daemon.unref();
  const deadline = Date.now() + DAEMON_START_MS;
  while (Date.now() < deadline) {
    const socket = await reach(place.socket);
    if (socket) return socket;
    if (exited !== undefined && exited !== 0) break;
    await delay(POLL_MS);
  }
  const why = exited === undefined ? `did not listen within ${DAEMON_START_MS} ms` : `exited with code ${exited} before it listened`;
  throw new StartupError(`the gaggle daemon for ${config.path} ${why}; its log (${place.log}) ends:\n${tail(place.log)}\nor run gaggle --standalone`);
}

function tail(file: string, lines = 10): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
