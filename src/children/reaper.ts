// A watchdog that outlives gaggle by design: if gaggle dies without shutting down (SIGKILL, OOM killer),
// it kills every process tree gaggle still had running.
import { spawn, type ChildProcess } from "node:child_process";
import { logger } from "../shared/log.js";
import type { ProcessTree } from "./process-group.js";

/**
 * POSIX sh, so the watchdog costs a shell rather than a second Node process. It reads `+ PGID TOKEN` and
 * `- PGID` lines from gaggle; at end of input, which comes when gaggle exits however it exits, it SIGTERMs
 * the groups still listed and every process whose environment carries one of their tokens, waits the grace
 * period, and SIGKILLs them (a few rounds: a process forked between a scan and its kill escapes one round).
 * It ignores SIGINT and SIGHUP and leads its own group, so a Ctrl-C or hang-up that kills gaggle cannot take
 * it down first. Tokens are hex, so they need no quoting.
 */
const SCRIPT = `
trap '' INT HUP
trees=" "
while read -r op id token; do
  case "$op" in
    +) trees="$trees$id:$token " ;;
    -) kept=" "; for t in $trees; do [ "\${t%%:*}" = "$id" ] || kept="$kept$t "; done; trees=$kept ;;
  esac
done
[ "$trees" = " " ] && exit 0
patterns=""
for t in $trees; do patterns="$patterns -e \${t#*:}"; done
signal_all() {
  for t in $trees; do kill "-$1" "-\${t%%:*}" 2>/dev/null; done
  pids=""
  for f in $(grep -lsF $patterns /proc/[0-9]*/environ); do p=\${f#/proc/}; pids="$pids \${p%/environ}"; done
  [ -n "$pids" ] && kill "-$1" $pids 2>/dev/null
}
signal_all TERM
sleep "$1"
for round in 1 2 3; do signal_all KILL; done
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

export function watchTree(tree: ProcessTree): void {
  ensureWatchdog()?.stdin?.write(`+ ${tree.pgid} ${tree.token}\n`);
}

export function unwatchTree(tree: ProcessTree): void {
  if (watchdog?.stdin?.writable) watchdog.stdin.write(`- ${tree.pgid}\n`);
}
