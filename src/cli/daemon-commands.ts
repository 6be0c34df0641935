// `gaggle stop` and `gaggle logs`: the daemon of a config, stopped, or its log shown.
import { readdirSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { alive, placeOfFile, readRecord, recordsOfConfig, type DaemonRecord } from "./daemon-files.js";

/** How long `gaggle stop` waits for the daemon to exit; it stops its children first, within its shutdown grace. */
const STOP_WAIT_MS = 10_000;

/**
 * The daemon is found by the config file's path and text (see daemon-key.ts), never by loading it: a daemon runs,
 * and is stopped, whether or not its file loads in this shell's environment. Any other daemon of the same file is
 * stopped too: one started by another build of gaggle (before an upgrade) or in another environment, which this
 * shell's key does not reach and which would otherwise run until idle beside the next.
 */
export async function runStop(configPath: string): Promise<number> {
  const own = readRecord(placeOfFile(configPath));
  const others = recordsOfConfig(configPath).filter((record) => record.pid !== own?.pid);
  if (!own && others.length === 0) {
    process.stdout.write(`no gaggle daemon runs for ${configPath}\n`);
    return 0;
  }
  const stops = [...(own ? [stop(own, configPath, "")] : []), ...others.map((record) => stop(record, configPath, elsewhere(record)))];
  return Math.max(...(await Promise.all(stops)));
}

function elsewhere(record: DaemonRecord): string {
  return `: gaggle ${record.version}, started from another build of gaggle or with other values of the config's \${VAR}s`;
}

async function stop(record: DaemonRecord, configPath: string, note: string): Promise<number> {
  try {
    process.kill(record.pid, "SIGTERM");
  } catch {
    // Gone since its record was read.
  }
  const deadline = Date.now() + STOP_WAIT_MS;
  while (alive(record.pid) && Date.now() < deadline) await delay(50);
  if (alive(record.pid)) {
    process.stderr.write(`gaggle: the daemon (pid ${record.pid}) is still stopping after ${STOP_WAIT_MS} ms\n`);
    return 1;
  }
  process.stdout.write(`stopped the gaggle daemon for ${configPath} (pid ${record.pid})${note}\n`);
  return 0;
}

/** The last `lines` lines of the log of this config's daemon, or of the daemon that logged last when it has none. */
export async function runLogs(configPath: string, lines = 200): Promise<number> {
  const place = placeOfFile(configPath);
  const file = newestLog(place.dir, place.log);
  if (!file) {
    process.stderr.write(`gaggle: no daemon has logged in ${place.dir} yet\n`);
    return 1;
  }
  process.stderr.write(`gaggle: ${file}\n`);
  const text = (await readFile(file, "utf8")).trimEnd();
  process.stdout.write(`${text.split("\n").slice(-lines).join("\n")}\n`);
  return 0;
}

function newestLog(dir: string, own: string): string | undefined {
  const modified = (file: string) => {
    try {
      return statSync(file).mtimeMs;
    } catch {
      return undefined;
    }
  };
  if (modified(own) !== undefined) return own;
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".log"));
  } catch {
    return undefined;
  }
  return names.map((name) => join(dir, name)).sort((a, b) => (modified(b) ?? 0) - (modified(a) ?? 0))[0];
}
