// The bash side of a persistent shell: each command runs as a job of its own process group, and what it changed
// (working directory, variables, functions, options) is carried back into the shell, which never runs user code itself.

/**
 * Variables a job never carries back: bash's own (read-only, or changed by merely running, like SECONDS and
 * BASH_SUBSHELL), the command's token, and the shell's own machinery (`__gg_*`).
 */
const KEPT_OUT = [
  "BASH",
  "BASHOPTS",
  "BASHPID",
  "BASH_*",
  "COMP_*",
  "DIRSTACK",
  "EPOCHREALTIME",
  "EPOCHSECONDS",
  "EUID",
  "FUNCNAME",
  "GROUPS",
  "HISTCMD",
  "LINENO",
  "OLDPWD",
  "PIPESTATUS",
  "PPID",
  "PWD",
  "RANDOM",
  "SECONDS",
  "SHELLOPTS",
  "SHLVL",
  "SRANDOM",
  "UID",
  "_",
  "GAGGLE_CHILD_TOKEN",
  "__gg_*",
].join("|");

/**
 * Defines the shell's machinery; `dir` is the shell's private folder. `set -m` gives every background job a
 * process group of its own, so a command past its time is killed with its group and the shell goes on.
 *
 * In the job, `__gg_enter` appends the command's token to GAGGLE_CHILD_TOKEN (so that what the command starts,
 * even outside its group, can be found and killed), notes the names of the variables and functions the job
 * begins with, restores the options the last command left (job control off: the shell's `set -m` is among them, and
 * would give what the command puts in the background a group of its own, where a job that cleared its environment
 * could no longer be found), and arms `__gg_save` for when the job exits however
 * it exits (`exit`, an error under `set -e`, SIGTERM). `__gg_save` writes what the job ended with as a script
 * the shell sources at top level (so that `declare` makes globals): `cd`, `unset` of what the job removed,
 * `declare -p` of every variable, `declare -f` of every function; then marks it complete, so that a job killed
 * while saving leaves the shell as it was. Options go to a file the next job sources, never into the shell.
 */
export function shellSetup(dir: string): string {
  const d = quote(dir);
  return `set -m
__gg_dir=${d}
__gg_skip() { case $1 in ${KEPT_OUT}) return 0 ;; esac; return 1; }
__gg_enter() {
  export GAGGLE_CHILD_TOKEN="\${GAGGLE_CHILD_TOKEN:+$GAGGLE_CHILD_TOKEN,}$1"
  trap __gg_save EXIT
  compgen -v >"$__gg_dir/vars.before"
  compgen -A function >"$__gg_dir/functions.before"
  [ -f "$__gg_dir/options" ] && . "$__gg_dir/options" 2>/dev/null
  set +m
  return 0
}
__gg_save() {
  { set +o; shopt -p; } >"$__gg_dir/options" 2>/dev/null
  set +euvx +o pipefail
  exec 2>/dev/null
  local __gg_n __gg_names
  local -A __gg_keep=()
  compgen -v >"$__gg_dir/vars.after"
  compgen -A function >"$__gg_dir/functions.after"
  {
    printf 'builtin cd -- %q\\n' "$PWD"
    [[ -v OLDPWD ]] && declare -p OLDPWD
    mapfile -t __gg_names <"$__gg_dir/vars.after"
    for __gg_n in "\${__gg_names[@]}"; do
      __gg_keep[$__gg_n]=1
      __gg_skip "$__gg_n" || declare -p "$__gg_n"
    done
    mapfile -t __gg_names <"$__gg_dir/vars.before"
    for __gg_n in "\${__gg_names[@]}"; do
      [[ -n \${__gg_keep[$__gg_n]} ]] || __gg_skip "$__gg_n" || printf 'unset -v %q\\n' "$__gg_n"
    done
    __gg_keep=()
    mapfile -t __gg_names <"$__gg_dir/functions.after"
    for __gg_n in "\${__gg_names[@]}"; do
      __gg_keep[$__gg_n]=1
      [[ $__gg_n == __gg_* ]] || declare -f "$__gg_n"
    done
    mapfile -t __gg_names <"$__gg_dir/functions.before"
    for __gg_n in "\${__gg_names[@]}"; do
      [[ -n \${__gg_keep[$__gg_n]} || $__gg_n == __gg_* ]] || printf 'unset -f %q\\n' "$__gg_n"
    done
  } >"$__gg_dir/state"
  printf 1 >"$__gg_dir/saved"
}
__gg_wait() {
  printf '%s started %s\\n' "$2" "$1" >&2
  wait "$1"
  __gg_status=$?
}
__gg_done() { printf '%s %d %s\\0' "$1" "$__gg_status" "$PWD"; }
`;
}

/**
 * One command: the job (stdin from /dev/null, stderr into stdout in order) in the background, then, at top
 * level, the wait, the state the job saved, and the end marker carrying the nonce, the exit status and the
 * working directory.
 */
export function runLine(nonce: string, token: string): string {
  return (
    `: >"$__gg_dir/saved"; ( __gg_enter ${token}; . "$__gg_dir/command" ) </dev/null 2>&1 & __gg_wait $! ${nonce}; ` +
    `[ -s "$__gg_dir/saved" ] && . "$__gg_dir/state" 2>/dev/null; __gg_done ${nonce}\n`
  );
}

/** A word bash reads back exactly as given. */
export function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
