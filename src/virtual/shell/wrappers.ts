// Commands that run other commands, and where in their words the command they run stands: wrappers (`sudo`, `env`,
// `strace`, ...), strings run as command lines (`sh -c`, `eval`, `trap`, `script -c`), and shells fed on stdin.
import type { Word } from "./hidden-code.js";

/**
 * What a command runs in turn: a `command` among its words (`placeholder`: a word holding it is replaced at run time,
 * as xargs -I and find -exec do), a `string` read as a command line, the command lines on its `stdin`, or a reason it
 * cannot be known.
 */
export type Runs =
  | { kind: "command"; words: Word[]; placeholder?: string }
  | { kind: "string"; text: string | undefined; what: string }
  | { kind: "stdin"; what: string }
  | { kind: "unverifiable"; reason: string };

/** Options that take a value as the next word, per wrapper whose command follows its options; a Map, so a command named `constructor` is no wrapper. */
const VALUE_OPTIONS = new Map<string, string[]>(
  Object.entries({
    env: ["-u", "--unset", "-C", "--chdir"],
    sudo: ["-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p", "--prompt", "-r", "--role"].concat([
      "-t",
      "--type",
      "-U",
      "--other-user",
      "-T",
      "--command-timeout",
    ]),
    doas: ["-u", "-C"],
    exec: ["-a"],
    nice: ["-n", "--adjustment"],
    ionice: ["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"],
    timeout: ["-s", "--signal", "-k", "--kill-after"],
    stdbuf: ["-i", "--input", "-o", "--output", "-e", "--error"],
    xargs: ["-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "--eof", "-I", "-L", "--max-lines", "-n", "--max-args"].concat([
      "-P",
      "--max-procs",
      "-s",
      "--max-chars",
      "--process-slot-var",
    ]),
    flock: ["-w", "--timeout", "-E", "--conflict-exit-code"],
    chroot: ["--userspec", "--groups"],
    watch: ["-n", "--interval", "-d", "--differences", "-q", "--equexit"],
    setpriv: [
      "--reuid",
      "--regid",
      "--ruid",
      "--euid",
      "--rgid",
      "--egid",
      "--groups",
      "--inh-caps",
      "--ambient-caps",
      "--bounding-set",
      "--securebits",
      "--pdeathsig",
      "--selinux-label",
      "--apparmor-profile",
      "--landlock-access",
      "--landlock-rule",
      "--seccomp-filter",
    ],
    unshare: ["-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd", "--propagation", "--setgroups", "--map-user", "--map-group"],
    prlimit: ["-p", "--pid", "-o", "--output"],
    strace: ["-e", "-o", "-p", "-s", "-u", "-a", "-b", "-E", "-I", "-O", "-P", "-S", "-X", "-U", "--output", "--attach", "--user", "--env"],
    ltrace: ["-e", "-o", "-p", "-s", "-u", "-a", "-n", "-l", "-x", "-F", "-A", "-D", "-w"],
    chrt: ["-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"],
    runuser: ["-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"],
    nsenter: ["-t", "--target", "-S", "--setuid", "-G", "--setgid"],
    cgexec: ["-g"],
    "systemd-run": [
      "-u",
      "--unit",
      "-p",
      "--property",
      "--description",
      "--slice",
      "-E",
      "--setenv",
      "--uid",
      "--gid",
      "--nice",
      "-H",
      "--host",
      "-M",
      "--machine",
    ],
    pkexec: ["--user"],
    fakeroot: ["-l", "--lib", "--faked", "-s", "-i", "-b"],
    torsocks: ["-u", "-p", "-a", "-P"],
    proxychains: ["-f"],
    proxychains4: ["-f"],
    trickle: ["-u", "-d", "-w", "-t", "-l", "-n"],
    faketime: ["-m", "-f", "-p"],
    numactl: ["-i", "--interleave", "-N", "--cpunodebind", "-m", "--membind", "-C", "--physcpubind", "-p", "--preferred"],
    "dbus-run-session": ["--config-file", "--dbus-daemon"],
    firejail: [],
    valgrind: [],
    catchsegv: [],
    rlwrap: [],
    tsocks: [],
    taskset: [],
    setsid: [],
    nohup: [],
    time: [],
    command: [],
    builtin: [],
    unbuffer: [],
    busybox: [],
    coproc: [],
  }),
);

/** Words each wrapper takes before its command, beside its options: `timeout 5 cmd`, `chroot /new cmd`, `chrt 10 cmd`. */
const LEADING_OPERANDS = new Map(Object.entries({ timeout: 1, chroot: 1, flock: 1, taskset: 1, chrt: 1, faketime: 1 }));

/** Options after which a wrapper runs no command of its own: it acts on a running process (`strace -p PID`). */
const NO_COMMAND = new Map(Object.entries({ command: ["-v", "-V"], strace: ["-p", "--attach"], ltrace: ["-p"], chrt: ["-p", "--pid"] }));

export const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "rbash", "yash", "posh"]);

/** Paths a shell or `source` reads its own standard input through. */
const STDIN_PATHS = new Set(["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"]);

/** What `name` (a command's name, its path left out) runs when given `rest`; empty when it runs nothing of its own. */
export function runsOf(name: string, rest: Word[]): Runs[] {
  if (name === "eval") return [joined(rest, "eval's arguments")];
  if (SHELLS.has(name)) return shellRuns(name, rest);
  if (name === "su" || name === "runuser") return suRuns(name, rest);
  if (name === "source" || name === ".") return sourceRuns(name, rest);
  if (name === "find") return findExec(rest);
  if (name === "trap") return trapRuns(rest);
  if (name === "hash") return hashRuns(rest);
  if (name === "sg") return sgRuns(rest);
  if (name === "script") return scriptRuns(rest);
  if (name === "parallel") return parallelRuns(rest);
  if (name === "at" || name === "batch") return atRuns(name, rest);
  if (name === "mapfile" || name === "readarray" || name === "compgen" || name === "complete") return callbackRuns(name, rest);
  return wrapperRuns(name, rest);
}

function wrapperRuns(name: string, rest: Word[]): Runs[] {
  const takesValue = VALUE_OPTIONS.get(name);
  if (takesValue === undefined) return [];
  const stops = NO_COMMAND.get(name) ?? [];
  let at = 0;
  const leading = LEADING_OPERANDS.get(name) ?? 0;
  let operands = leading;
  let placeholder: string | undefined;
  // `coproc NAME { ... }`: the name of the coprocess, then the group's first command.
  if (name === "coproc") {
    const opens = (word: Word | undefined) => word?.text === "{" || word?.text === "(";
    if (rest.length > 1 && /^[A-Za-z_]\w*$/.test(rest[0]!.text) && opens(rest[1])) at = 1;
    if (opens(rest[at])) at++;
    return at < rest.length ? [{ kind: "command", words: rest.slice(at) }] : [];
  }
  while (at < rest.length) {
    const word = rest[at]!;
    const value = word.value ?? braceOption(word.text);
    if (value === "--") {
      at++;
      break;
    }
    if (value !== undefined && stops.includes(value)) return [];
    if (name === "env" && value !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
      at++;
      continue;
    }
    if (name === "env" && (value === "-S" || value?.startsWith("--split-string"))) {
      const string = value === "-S" ? rest[at + 1]?.value : value.slice(value.indexOf("=") + 1);
      return [{ kind: "string", text: string, what: "env -S's string" }];
    }
    if (name === "flock" && (value === "-c" || value === "--command"))
      return [{ kind: "string", text: rest[at + 1]?.value, what: "flock -c's string" }];
    if (name === "runuser" && (value === "-c" || value === "--command"))
      return [{ kind: "string", text: rest[at + 1]?.value, what: "runuser -c's string" }];
    if (name === "xargs" && value !== undefined) placeholder = xargsPlaceholder(value, rest[at + 1]?.value) ?? placeholder;
    if (value !== undefined && value.startsWith("-") && value.length > 1 && operands === leading) {
      at += takesValue.includes(value) ? 2 : 1;
      continue;
    }
    if (operands > 0) {
      operands--;
      at++;
      continue;
    }
    break;
  }
  if (at >= rest.length) return [];
  // watch runs its words as one string in a shell.
  if (name === "watch") return [joined(rest.slice(at), "watch's command")];
  return [{ kind: "command", words: rest.slice(at), ...(placeholder !== undefined && { placeholder }) }];
}

/** An option holding braces (`-I{}`), which bash passes on as written when they hold no comma or `..`. */
function braceOption(text: string): string | undefined {
  return /^-[\w-]*\{[\w-]*\}$/.test(text) ? text : undefined;
}

/** xargs -I R, -IR, -i[R], --replace[=R]: R in the command's words is replaced by each input item. */
function xargsPlaceholder(option: string, next: string | undefined): string | undefined {
  if (option === "-I") return next;
  if (option.startsWith("-I")) return option.slice(2);
  if (option.startsWith("-i")) return option.slice(2) || "{}";
  if (option === "--replace") return "{}";
  if (option.startsWith("--replace=")) return option.slice("--replace=".length);
  return undefined;
}

/** Options of a shell that take the next word as their value. */
const SHELL_VALUE_OPTIONS = new Set(["-o", "+o", "-O", "+O", "--rcfile", "--init-file"]);

/**
 * `bash -c STRING` (with its options anywhere before the string: `-ec`, `-c -x`), a script file, or commands on stdin
 * (no operand, `-s`, or `/dev/stdin`). A word the shell reads as an option or the string that is expanded is unknown.
 */
function shellRuns(name: string, rest: Word[]): Runs[] {
  let command = false;
  let stdin = false;
  for (let at = 0; at < rest.length; at++) {
    const value = rest[at]!.value;
    if (value === undefined) return [{ kind: "unverifiable", reason: `an argument to ${name} that is expanded when it runs (${rest[at]!.text})` }];
    if (value === "--" || value === "-") {
      at++;
      return operand(rest[at]);
    }
    if (SHELL_VALUE_OPTIONS.has(value)) {
      at++;
      // A start-up file made when it runs (`--rcfile <(...)`) holds commands no reading of the line sees.
      if (value.endsWith("file") && rest[at] !== undefined && rest[at]!.value === undefined) {
        return [{ kind: "unverifiable", reason: `${name} ${value} of a file known only when it runs (${rest[at]!.text})` }];
      }
      continue;
    }
    if (value === "--command") command = true;
    else if (value.startsWith("--")) continue;
    else if (/^[-+]/.test(value) && value.length > 1) {
      if (value.startsWith("-") && value.includes("c")) command = true;
      if (value.startsWith("-") && value.includes("s")) stdin = true;
    } else return operand(rest[at]);
  }
  return command
    ? [{ kind: "string", text: undefined, what: `${name} -c's missing string` }]
    : [{ kind: "stdin", what: `${name} reading commands from its input` }];

  function operand(word: Word | undefined): Runs[] {
    if (word === undefined) return command ? [] : [{ kind: "stdin", what: `${name} reading commands from its input` }];
    if (word.value === undefined) return [{ kind: "unverifiable", reason: `an argument to ${name} that is expanded when it runs (${word.text})` }];
    if (command) return [{ kind: "string", text: word.value, what: `${name} -c's string` }];
    if (stdin || STDIN_PATHS.has(word.value)) return [{ kind: "stdin", what: `${name} reading commands from its input` }];
    return []; // a script file: what it runs is not in the line
  }
}

/** `su -c STRING` and `runuser -c STRING` (the option anywhere), `runuser -u USER CMD`, or a login shell reading its input. */
function suRuns(name: string, rest: Word[]): Runs[] {
  for (let at = 0; at < rest.length; at++) {
    const value = rest[at]!.value;
    if (value === "-c" || value === "--command" || value === "--session-command")
      return [{ kind: "string", text: rest[at + 1]?.value, what: `${name} -c's string` }];
    if (value?.startsWith("--command=")) return [{ kind: "string", text: value.slice("--command=".length), what: `${name} --command's string` }];
    if (name === "runuser" && (value === "-u" || value === "--user")) return wrapperRuns(name, rest);
  }
  return [{ kind: "stdin", what: `${name}'s shell reading commands from its input` }];
}

/** `source FILE` and `. FILE`: a script file, or the commands on stdin through /dev/stdin; an expanded or substituted file is unknown. */
function sourceRuns(name: string, rest: Word[]): Runs[] {
  const file = rest[0]?.value === "--" ? rest[1] : rest[0];
  if (file === undefined) return [];
  if (file.value === undefined) return [{ kind: "unverifiable", reason: `${name} of a file known only when it runs (${file.text})` }];
  return STDIN_PATHS.has(file.value) ? [{ kind: "stdin", what: `${name} reading commands from its input` }] : [];
}

/** `find ... -exec CMD ... ;` (and -execdir, -ok, -okdir): each command it runs, `{}` replaced by each file. */
function findExec(rest: Word[]): Runs[] {
  const runs: Runs[] = [];
  for (let at = 0; at < rest.length; at++) {
    if (!["-exec", "-execdir", "-ok", "-okdir"].includes(rest[at]!.value ?? "")) continue;
    const end = rest.findIndex((word, i) => i > at && (word.value === ";" || word.value === "+"));
    runs.push({ kind: "command", words: rest.slice(at + 1, end === -1 ? undefined : end), placeholder: "{}" });
  }
  return runs;
}

/** `trap ACTION SIGNAL...`: the action is a command line, run when a signal comes or the shell exits. */
function trapRuns(rest: Word[]): Runs[] {
  const operands = rest[0]?.value === "--" ? rest.slice(1) : rest.filter((word, i) => i > 0 || !/^-[lpP]+$/.test(word.value ?? ""));
  if (operands.length < 2 || operands[0]!.value === "-") return [];
  return [{ kind: "string", text: operands[0]!.value, what: "trap's action" }];
}

/** `hash -p PATH NAME`: NAME runs PATH from then on, so PATH is read as the command it makes NAME run. */
function hashRuns(rest: Word[]): Runs[] {
  const at = rest.findIndex((word) => /^-[a-z]*p[a-z]*$/.test(word.value ?? ""));
  if (at === -1) return [];
  const path = rest[at + 1];
  return path ? [{ kind: "command", words: [path] }] : [];
}

/** `sg GROUP [-c] COMMAND`: the command is a string run by /bin/sh. */
function sgRuns(rest: Word[]): Runs[] {
  let at = rest[0]?.value === "-" ? 1 : 0;
  at++; // the group
  if (rest[at]?.value === "-c") at++;
  return at < rest.length ? [joined(rest.slice(at), "sg's command")] : [];
}

/** `script -c COMMAND`, or an interactive shell reading its input. */
function scriptRuns(rest: Word[]): Runs[] {
  for (let at = 0; at < rest.length; at++) {
    const value = rest[at]!.value;
    if (value === "-c" || value === "--command") return [{ kind: "string", text: rest[at + 1]?.value, what: "script -c's command" }];
    if (value?.startsWith("--command=")) return [{ kind: "string", text: value.slice("--command=".length), what: "script --command's command" }];
    if (value !== undefined && /^-[a-zA-Z]*c$/.test(value)) return [{ kind: "string", text: rest[at + 1]?.value, what: "script -c's command" }];
  }
  return [{ kind: "stdin", what: "script's shell reading commands from its input" }];
}

const PARALLEL_VALUE_OPTIONS = new Set(
  ["-j", "--jobs", "-S", "--sshlogin", "--joblog", "--colsep", "-d", "--delimiter", "-E", "-I", "--results", "--tmpdir", "--workdir"].concat([
    "--timeout",
    "--retries",
    "-n",
    "--max-args",
    "-N",
    "-L",
    "--max-lines",
    "-s",
    "--max-chars",
    "--env",
    "--tag-string",
    "--rpl",
  ]),
);
const PARALLEL_SOURCES = new Set([":::", "::::", ":::+", "::::+"]);

/**
 * GNU parallel: the command template before `:::` runs in a shell with `{}` replaced; without one, each argument is
 * a command line of its own, read from the words after `:::`, from a file (`::::`, -a) or from stdin.
 */
function parallelRuns(rest: Word[]): Runs[] {
  let at = 0;
  let fromFile = false;
  while (at < rest.length) {
    const value = rest[at]!.value;
    if (value === undefined || !value.startsWith("-") || PARALLEL_SOURCES.has(value)) break;
    if (value === "-a" || value === "--arg-file") fromFile = true;
    at += PARALLEL_VALUE_OPTIONS.has(value) || value === "-a" || value === "--arg-file" ? 2 : 1;
  }
  const end = rest.findIndex((word, i) => i >= at && PARALLEL_SOURCES.has(word.value ?? ""));
  const template = rest.slice(at, end === -1 ? undefined : end);
  if (template.length > 0) return [{ kind: "command", words: template, placeholder: "{" }];
  if (end === -1) return fromFile ? [] : [{ kind: "stdin", what: "parallel reading commands from its input" }];
  return rest
    .slice(end)
    .flatMap((word): Runs[] =>
      PARALLEL_SOURCES.has(word.value ?? "") ? [] : [{ kind: "string", text: word.value, what: "parallel's argument, run as a command" }],
    );
}

/** `at` and `batch` run the commands on their input, or in the file -f names. */
function atRuns(name: string, rest: Word[]): Runs[] {
  if (rest.some((word) => /^-[a-zA-Z]*[flrdc]/.test(word.value ?? ""))) return [];
  return [{ kind: "stdin", what: `${name} reading commands from its input` }];
}

/** `mapfile -C CALLBACK` and `compgen -C COMMAND` (`complete -C` likewise): a command line run as lines are read or words completed. */
function callbackRuns(name: string, rest: Word[]): Runs[] {
  const at = rest.findIndex((word) => word.value === "-C");
  return at === -1 ? [] : [{ kind: "string", text: rest[at + 1]?.value, what: `${name} -C's callback` }];
}

function joined(words: Word[], what: string): Runs {
  const values = words.map((word) => word.value);
  return { kind: "string", text: values.some((value) => value === undefined) ? undefined : values.join(" "), what };
}
