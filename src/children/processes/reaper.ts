// A watchdog that outlives gaggle by design: if gaggle dies without shutting down (SIGKILL, OOM killer),
// it kills every process tree gaggle still had running.
import { spawn, type ChildProcess } from "node:child_process";
import { logger } from "../../shared/log.js";
import type { ProcessTree } from "./process-tree.js";

/**
 * POSIX sh, so the watchdog costs a shell rather than a second Node process. It reads `+ PGID TOKEN` and
 * `- PGID TOKEN` lines from gaggle; at end of input, which comes when gaggle exits however it exits, it SIGTERMs
 * the groups still listed and every process whose environment carries one of their tokens, waits the grace
 * period, and SIGKILLs them (a few rounds: a process forked between a scan and its kill escapes one round).
 * It ignores SIGINT and SIGHUP and leads its own group, so a Ctrl-C or hang-up that kills gaggle cannot take
 * it down first. Tokens are hex, so they need no quoting. `d PATH` and `u PATH` add and drop a folder it removes
 * once the processes are gone (a shell's private folder, holding its variables); a path is the rest of its line.
 */
const SCRIPT = `
trap '' INT HUP
set -f
nl='
'
trees=" "
folders=""
while IFS= read -r line; do
  op=\${line%% *}; rest=\${line#* }; id=\${rest%% *}; token=\${rest#* }
  case "$op" in
    +) trees="$trees$id:$token " ;;
    -) kept=" "; for t in $trees; do [ "$t" = "$id:$token" ] || kept="$kept$t "; done; trees=$kept ;;
    d) folders="$folders$rest$nl" ;;
    u) kept=""; IFS=$nl; for f in $folders; do [ "$f" = "$rest" ] || kept="$kept$f$nl"; done; unset IFS; folders=$kept ;;
  esac
done
remove_folders() { set -f; IFS=$nl; for f in $folders; do rm -rf -- "$f"; done; unset IFS; }
[ "$trees" = " " ] && { remove_folders; exit 0; }
set +f
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
remove_folders
`;

/**
 * What the watchdog must kill, group ids by token: kept here so that a new watchdog can be told all of it. By
 * token, not group id, since the kernel may give a new child the pid of one whose tree is still being unwatched.
 */
const watched = new Map<string, number>();
/** Private folders the watchdog removes should gaggle die: one line each, so a path holding a newline is never given. */
const folders = new Set<string>();
let watchdog: ChildProcess | undefined;
let startedAt = 0;
let graceSeconds = "2";

/** A watchdog that dies sooner than this after its start is replaced only once this long after that start. */
const RESTART_GAP_MS = 1000;

export function setReaperGrace(ms: number): void {
  graceSeconds = (ms / 1000).toFixed(3);
}

function ensureWatchdog(): ChildProcess | undefined {
  if (watchdog?.stdin?.writable) return watchdog;
  const log = logger({ subsystem: "reaper" });
  try {
    const started = spawn("/bin/sh", ["-c", SCRIPT, "gaggle-reaper", graceSeconds], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
    started.on("error", (error) => log.warn({ err: error }, "watchdog unavailable"));
    started.stdin!.on("error", () => {});
    started.once("exit", (code, signal) => onWatchdogExit(started, code, signal));
    // Neither the process nor its pipe may keep gaggle running: it exists for the moment gaggle is gone.
    started.unref();
    (started.stdin as unknown as { unref?: () => void }).unref?.();
    watchdog = started;
    startedAt = Date.now();
    for (const [token, pgid] of watched) started.stdin!.write(`+ ${pgid} ${token}\n`);
    for (const folder of folders) started.stdin!.write(`d ${folder}\n`);
    return started;
  } catch (error) {
    log.warn({ err: error }, "watchdog unavailable");
    return undefined;
  }
}

/**
 * The watchdog only ends by itself once gaggle has gone, so gaggle seeing it end means it was killed: a new one
 * is started with everything the old one held, or gaggle's children would outlive a later SIGKILL of gaggle.
 */
function onWatchdogExit(ended: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
  if (watchdog !== ended) return;
  watchdog = undefined;
  const log = logger({ subsystem: "reaper" });
  const context = { pid: ended.pid, code, signal, trees: watched.size };
  if (watched.size === 0 && folders.size === 0) {
    log.warn(context, "watchdog exited; the next child's start brings a new one");
    return;
  }
  log.warn(context, "watchdog exited; starting a new one");
  const restart = () => {
    if (watched.size > 0 || folders.size > 0) ensureWatchdog();
  };
  // Killed again and again, it is not started again and again at once.
  const wait = startedAt + RESTART_GAP_MS - Date.now();
  if (wait <= 0) restart();
  else setTimeout(restart, wait).unref();
}

export function watchTree(tree: ProcessTree): void {
  watched.set(tree.token, tree.pgid);
  // A watchdog started now is told everything watched, this tree included.
  if (watchdog?.stdin?.writable) watchdog.stdin.write(`+ ${tree.pgid} ${tree.token}\n`);
  else ensureWatchdog();
}

export function unwatchTree(tree: ProcessTree): void {
  watched.delete(tree.token);
  if (watchdog?.stdin?.writable) watchdog.stdin.write(`- ${tree.pgid} ${tree.token}\n`);
}

/** `path` (a folder gaggle made, holding what must not outlive it) is removed by the watchdog should gaggle die. */
export function watchFolder(path: string): void {
  if (path.includes("\n")) return;
  folders.add(path);
  if (watchdog?.stdin?.writable) watchdog.stdin.write(`d ${path}\n`);
  else ensureWatchdog();
}

export function unwatchFolder(path: string): void {
  if (!folders.delete(path)) return;
  if (watchdog?.stdin?.writable) watchdog.stdin.write(`u ${path}\n`);
}
