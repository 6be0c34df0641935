// The relay's hot path, run by the executable before it loads gaggle's program: when the daemon of the config runs,
// the bytes of stdin and stdout go to and from its socket, and nothing else of gaggle is loaded. Anything else (no
// daemon yet, a command, a terminal) falls through to the program.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { findConfigPath } from "../config/find.js";
import { daemonPlace } from "./daemon-files.js";
import { daemonKeyOf } from "./daemon-key.js";

/**
 * True once this process relays to a running daemon (it then lives until either side ends); false when the program
 * must run: arguments other than `--config PATH`, stdin a terminal, GAGGLE_STANDALONE set, no config found, or no
 * daemon listening for the config's key.
 */
export async function relayToRunningDaemon(argv: string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  const explicit = configArgument(argv);
  if (explicit === null || process.stdin.isTTY || env.GAGGLE_STANDALONE) return false;
  let path: string;
  let text: string;
  try {
    path = findConfigPath({ explicit, cwd: process.cwd(), env });
    text = readFileSync(path, "utf8");
  } catch {
    return false;
  }
  const place = daemonPlace(daemonKeyOf(path, text, env), env);
  const socket = await reach(place.socket);
  if (!socket) return false;
  if (explicit === undefined) process.stderr.write(`gaggle: using config ${path}\n`);
  pipeThrough(socket, place.log);
  return true;
}

/** The path of `--config PATH` (or `-c`, `--config=`), undefined for no arguments, null for any other argument. */
function configArgument(argv: string[]): string | undefined | null {
  if (argv.length === 0) return undefined;
  if (argv.length === 1 && argv[0]!.startsWith("--config=")) return argv[0]!.slice("--config=".length);
  if (argv.length === 2 && (argv[0] === "--config" || argv[0] === "-c")) return argv[1]!;
  return null;
}

/** A connection to the socket, or undefined when nothing listens there. */
export function reach(path: string): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", () => resolve(undefined));
  });
}

/**
 * stdin to the socket, the socket to stdout. The daemon ending the connection (it stopped) ends the relay, as
 * gaggle's own exit would end a stdio session, and says so on stderr, which the client keeps; the client closing
 * stdin half-closes the socket, and the daemon then ends it. `log` is the daemon's log as the relay connects.
 */
export function pipeThrough(socket: Socket, log: string): void {
  const logNow = followLog(log);
  let clientLeft = false;
  process.stdin.once("end", () => (clientLeft = true));
  socket.on("error", () => {});
  socket.once("close", () => {
    if (!clientLeft)
      process.stderr.write(
        `gaggle: the daemon ended this connection: it was stopped (gaggle stop) or killed; reconnect to start it again; its log is ${logNow()}\n`,
      );
    process.exit(0);
  });
  process.stdin.pipe(socket);
  socket.pipe(process.stdout);
}

/**
 * Where the daemon's log at `path` is when asked: the daemon renames it while relays run (to its edited config's
 * key, or aside past its size), and a rename keeps the file's identity (device and inode), by which it is found in
 * the daemon folder. A log moved aside (`KEY.log.1`) is followed by the one the daemon went on writing (`KEY.log`).
 */
function followLog(path: string): () => string {
  const id = identity(path);
  return () => {
    if (id === undefined || identity(path) === id) return path;
    const dir = dirname(path);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return path;
    }
    const found = names.find((name) => /\.log(\.1)?$/.test(name) && identity(join(dir, name)) === id);
    return found === undefined ? path : join(dir, found.replace(/\.1$/, ""));
  };
}

function identity(path: string): string | undefined {
  try {
    const { dev, ino } = statSync(path, { bigint: true });
    return `${dev}:${ino}`;
  } catch {
    return undefined;
  }
}
