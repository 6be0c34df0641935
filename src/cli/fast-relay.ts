// The relay's hot path, run by the executable before it loads gaggle's program: when the daemon of the config runs,
// the bytes of stdin and stdout go to and from its socket, and nothing else of gaggle is loaded. Anything else (no
// daemon yet, a command, a terminal) falls through to the program.
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
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
 * stdin half-closes the socket, and the daemon then ends it. `log` is the daemon's log.
 */
export function pipeThrough(socket: Socket, log: string): void {
  let clientLeft = false;
  process.stdin.once("end", () => (clientLeft = true));
  socket.on("error", () => {});
  socket.once("close", () => {
    if (!clientLeft)
      process.stderr.write(
        `gaggle: the daemon ended this connection: it was stopped (gaggle stop) or killed; reconnect to start it again; its log is ${log}\n`,
      );
    process.exit(0);
  });
  process.stdin.pipe(socket);
  socket.pipe(process.stdout);
}
