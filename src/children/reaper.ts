// A watchdog that outlives gaggle by design: if gaggle dies without shutting down (SIGKILL, OOM killer),
// it kills every process group gaggle still had running.
import { spawn, type ChildProcess } from "node:child_process";
import { logger } from "../shared/log.js";

/**
 * POSIX sh, so the watchdog costs a shell rather than a second Node process. It reads `+ PGID` and
 * `- PGID` lines from gaggle; at end of input, which comes when gaggle exits however it exits, it
 * SIGTERMs the groups still listed, waits the grace period, and SIGKILLs them. It ignores SIGINT and
 * SIGHUP and leads its own group, so a Ctrl-C or hang-up that kills gaggle cannot take it down first.
 */
const SCRIPT = `
trap '' INT HUP
groups=" "
while read -r op id; do
  case "$op" in
    +) groups="$groups$id " ;;
    -) kept=" "; for g in $groups; do [ "$g" = "$id" ] || kept="$kept$g "; done; groups=$kept ;;
  esac
done
[ "$groups" = " " ] && exit 0
for g in $groups; do kill -TERM "-$g" 2>/dev/null; done
sleep "$1"
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
`;

let watchdog: ChildProcess | undefined;
let graceSeconds = "2";

export function setReaperGrace(ms: number): void {
  graceSeconds = (ms / 1000).toFixed(3);
}

function ensureWatchdog(): ChildProcess | undefined {
  if (watchdog?.stdin?.writable) return watchdog;
  try {
    watchdog = spawn("/bin/sh", ["-c", SCRIPT, "gaggle-reaper", graceSeconds], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
    watchdog.on("error", (error) => logger({ subsystem: "reaper" }).warn({ err: error }, "watchdog unavailable"));
    watchdog.stdin!.on("error", () => {});
    // Neither the process nor its pipe may keep gaggle running: it exists for the moment gaggle is gone.
    watchdog.unref();
    (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
    return watchdog;
  } catch (error) {
    logger({ subsystem: "reaper" }).warn({ err: error }, "watchdog unavailable");
    return undefined;
  }
}

export function watchGroup(pgid: number): void {
  ensureWatchdog()?.stdin?.write(`+ ${pgid}\n`);
}

export function unwatchGroup(pgid: number): void {
  if (watchdog?.stdin?.writable) watchdog.stdin.write(`- ${pgid}\n`);
}
