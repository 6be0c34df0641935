// Watchdogs that outlive gaggle by design: if gaggle dies without shutting down (SIGKILL, OOM killer),
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
 * What the watchdogs must kill, group ids by token: kept here so that a new watchdog can be told all of it. By
 * token, not group id, since the kernel may give a new child the pid of one whose tree is still being unwatched.
 */
const watched = new Map<string, number>();
/**
 * Two watchdogs, each told everything: while one that was killed is being replaced, the other still stands, so
 * a SIGKILL of gaggle in that moment leaves nothing behind.
 */
const WATCHDOGS = 2;
const watchdogs = new Set<ChildProcess>();
/** Private folders the watchdogs remove should gaggle die: one line each, so a path holding a newline is never given. */
const folders = new Set<string>();
let lastStartedAt = 0;
let graceSeconds = "2";
let restartPending = false;

/** A watchdog killed while another stands is replaced no sooner than this after the last start. */
const RESTART_GAP_MS = 1000;

export function setReaperGrace(ms: number): void {
  graceSeconds = (ms / 1000).toFixed(3);
}

function live(): ChildProcess[] {
  return [...watchdogs].filter((watchdog) => watchdog.stdin?.writable);
}

/** Starts watchdogs until WATCHDOGS stand; each new one is told every tree watched. */
function ensureWatchdogs(): void {
  for (let missing = WATCHDOGS - live().length; missing > 0; missing--) if (!startWatchdog()) return;
}

function startWatchdog(): boolean {
  const log = logger({ subsystem: "reaper" });
  try {
    const started = spawn("/bin/sh", ["-c", SCRIPT, "gaggle-reaper", graceSeconds], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
    started.on("error", (error) => log.warn({ err: error }, "watchdog unavailable"));
    started.stdin!.on("error", () => {});
    started.once("exit", (code, signal) => onWatchdogExit(started, code, signal));
    // Neither the process nor its pipe may keep gaggle running: it exists for the moment gaggle is gone.
    started.unref();
    (started.stdin as unknown as { unref?: () => void }).unref?.();
    watchdogs.add(started);
    lastStartedAt = Date.now();
    for (const [token, pgid] of watched) started.stdin!.write(`+ ${pgid} ${token}\n`);
    for (const folder of folders) started.stdin!.write(`d ${folder}\n`);
    return true;
  } catch (error) {
    log.warn({ err: error }, "watchdog unavailable");
    return false;
  }
}

/**
 * A watchdog only ends by itself once gaggle has gone, so gaggle seeing one end means it was killed: a new one
 * is started with everything the old one held, at once when none stands, else after RESTART_GAP_MS (killed again
 * and again, they are not started again and again at once).
 */
function onWatchdogExit(ended: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
  if (!watchdogs.delete(ended)) return;
  const log = logger({ subsystem: "reaper" });
  const context = { pid: ended.pid, code, signal, trees: watched.size, folders: folders.size, standing: live().length };
  if (watched.size === 0 && folders.size === 0) {
    log.warn(context, "watchdog exited; the next child's start brings a new one");
    return;
  }
  log.warn(context, "watchdog exited; starting a new one");
  const wait = lastStartedAt + RESTART_GAP_MS - Date.now();
  if (live().length === 0 || wait <= 0) return ensureWatchdogs();
  if (restartPending) return;
  restartPending = true;
  setTimeout(() => {
    restartPending = false;
    if (watched.size > 0 || folders.size > 0) ensureWatchdogs();
  }, wait).unref();
}

export function watchTree(tree: ProcessTree): void {
  watched.set(tree.token, tree.pgid);
  // A watchdog started now is told everything watched, this tree included.
  const standing = live();
  for (const watchdog of standing) watchdog.stdin!.write(`+ ${tree.pgid} ${tree.token}\n`);
  if (standing.length < WATCHDOGS && !restartPending) ensureWatchdogs();
}

export function unwatchTree(tree: ProcessTree): void {
  watched.delete(tree.token);
  for (const watchdog of live()) watchdog.stdin!.write(`- ${tree.pgid} ${tree.token}\n`);
}

/** `path` (a folder gaggle made, holding what must not outlive it) is removed by the watchdog should gaggle die. */
export function watchFolder(path: string): void {
  if (path.includes("\n")) return;
  folders.add(path);
  const standing = live();
  for (const watchdog of standing) watchdog.stdin!.write(`d ${path}\n`);
  if (standing.length < WATCHDOGS && !restartPending) ensureWatchdogs();
}

export function unwatchFolder(path: string): void {
  if (!folders.delete(path)) return;
  for (const watchdog of live()) watchdog.stdin!.write(`u ${path}\n`);
}
