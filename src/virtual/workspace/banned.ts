// gomcptest's banned commands (network clients and browsers), found by reading the command with bash's grammar:
// behind paths, wrappers (env, sudo, xargs, find -exec, ...), `sh -c` and `eval` strings, substitutions and pipes.
import { basename } from "node:path";
import { GaggleError } from "../../shared/errors.js";
import { everyCommand, type Word } from "../shell/command-grammar.js";

/** gomcptest's list, with the names some of those programs run as (httpie is `http`, netcat `ncat` or `netcat`). */
export const BANNED_COMMANDS = [
  "alias",
  "curl",
  "curlie",
  "wget",
  "axel",
  "aria2c",
  "nc",
  "ncat",
  "netcat",
  "telnet",
  "lynx",
  "w3m",
  "links",
  "elinks",
  "httpie",
  "http",
  "https",
  "xh",
  "http-prompt",
  "chrome",
  "chromium",
  "chromium-browser",
  "google-chrome",
  "firefox",
  "safari",
] as const;

const BANNED = new Set<string>(BANNED_COMMANDS);

/** Strings run as commands (`sh -c '...'` inside `eval '...'` ...) are read this deep. */
const MAX_DEPTH = 8;

type Finding = { banned: string; text: string } | { unverifiable: string };

/**
 * Throws PERMISSION_DENIED when `command` would run a banned command anywhere bash's grammar can see one, or
 * names a command only at run time (`$CMD`, `$(echo curl)`), which could be any.
 */
export async function refuseBanned(command: string): Promise<void> {
  const found = await findBanned(command, 0);
  if (!found) return;
  if ("banned" in found) {
    throw new GaggleError("PERMISSION_DENIED", `the command runs ${found.banned} (in "${shorten(found.text)}"), which Bash refuses`, {
      hint: `network clients and browsers are banned here (${BANNED_COMMANDS.join(", ")}); ask the user to fetch what you need`,
    });
  }
  throw new GaggleError(
    "PERMISSION_DENIED",
    `the command uses ${found.unverifiable}: Bash cannot tell before it runs whether that is a banned command, so it refuses it`,
    { hint: "write the command's name out (no $VAR, $( ) or glob in the name)" },
  );
}

async function findBanned(source: string, depth: number): Promise<Finding | undefined> {
  if (depth > MAX_DEPTH) return { unverifiable: `commands nested in strings more than ${MAX_DEPTH} deep` };
  const read = await everyCommand(source);
  if ("unverifiable" in read) return read;
  for (const words of read.commands) {
    const found = await inCommand(words, depth);
    if (found) return found;
  }
  return undefined;
}

/** The name a word runs as: its last path component, when that is written out. */
function commandName(word: Word): string | undefined {
  if (word.value !== undefined) return basename(word.value);
  const last = word.text.slice(word.text.lastIndexOf("/") + 1);
  return /^[\w.+-]+$/.test(last) ? last : undefined;
}

/** A simple command, and the command it runs in turn when it is a wrapper (`sudo env X=1 nice curl`). */
async function inCommand(words: Word[], depth: number): Promise<Finding | undefined> {
  const text = words.map((word) => word.text).join(" ");
  let at = 0;
  while (at < words.length) {
    const word = words[at]!;
    const name = commandName(word);
    if (name === undefined) return { unverifiable: `a command name that is expanded when it runs (${word.text})` };
    if (BANNED.has(name)) return { banned: name, text };
    const rest = words.slice(at + 1);
    const next = await wrapped(name, rest, depth);
    if (next === undefined) return undefined;
    if ("finding" in next) return next.finding;
    at += 1 + next.skip;
  }
  return undefined;
}

/** Options that take a value as the next word, per wrapper; a Map, so a command named `constructor` is no wrapper. */
const VALUE_OPTIONS = new Map<string, string[]>(
  Object.entries({
    env: ["-u", "--unset", "-C", "--chdir"],
    sudo: [
      "-u",
      "--user",
      "-g",
      "--group",
      "-C",
      "--close-from",
      "-D",
      "--chdir",
      "-h",
      "--host",
      "-p",
      "--prompt",
      "-r",
      "--role",
      "-t",
      "--type",
      "-U",
      "--other-user",
      "-T",
      "--command-timeout",
    ],
    doas: ["-u", "-C"],
    exec: ["-a"],
    nice: ["-n", "--adjustment"],
    ionice: ["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"],
    timeout: ["-s", "--signal", "-k", "--kill-after"],
    stdbuf: ["-i", "--input", "-o", "--output", "-e", "--error"],
    xargs: [
      "-a",
      "--arg-file",
      "-d",
      "--delimiter",
      "-E",
      "-e",
      "--eof",
      "-I",
      "--replace",
      "-L",
      "--max-lines",
      "-n",
      "--max-args",
      "-P",
      "--max-procs",
      "-s",
      "--max-chars",
      "--process-slot-var",
    ],
    flock: ["-w", "--timeout", "-E", "--conflict-exit-code"],
    chroot: ["--userspec", "--groups"],
    watch: ["-n", "--interval", "-d", "--differences", "-q", "--equexit"],
    taskset: [],
    setsid: [],
    nohup: [],
    time: [],
    command: [],
    builtin: [],
    unbuffer: [],
    busybox: [],
  }),
);

/** Words each wrapper takes before its command, beside its options: `timeout 5 cmd`, `chroot /new cmd`, `flock FILE cmd`. */
const LEADING_OPERANDS = new Map(Object.entries({ timeout: 1, chroot: 1, flock: 1, taskset: 1 }));

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish"]);

/**
 * For a wrapper, where its command starts among `rest` (`skip` words in), or a finding in a string it runs;
 * undefined when `name` runs no command of its own.
 */
async function wrapped(name: string, rest: Word[], depth: number): Promise<{ skip: number } | { finding: Finding } | undefined> {
  if (name === "eval")
    return evalString(
      rest.map((word) => word.value),
      depth,
      "eval's arguments",
    );
  if (SHELLS.has(name) || name === "su") return shellString(name, rest, depth);
  if (name === "find") return findExec(rest, depth);
  const takesValue = VALUE_OPTIONS.get(name);
  if (takesValue === undefined) return undefined;
  let at = 0;
  const leading = LEADING_OPERANDS.get(name) ?? 0;
  let operands = leading;
  while (at < rest.length) {
    const word = rest[at]!;
    const value = word.value;
    if (value === "--") {
      at++;
      break;
    }
    if (name === "command" && (value === "-v" || value === "-V")) return undefined; // it only says what a name is
    if (name === "env" && value !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
      at++;
      continue;
    }
    if (name === "env" && (value === "-S" || value?.startsWith("--split-string"))) {
      const string = value === "-S" ? rest[at + 1]?.value : value.slice(value.indexOf("=") + 1);
      return evalString([string], depth, "env -S's string");
    }
    if (name === "flock" && (value === "-c" || value === "--command")) return evalString([rest[at + 1]?.value], depth, "flock -c's string");
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
  if (at >= rest.length) return undefined;
  // watch runs its words as one string in a shell.
  if (name === "watch")
    return evalString(
      rest.slice(at).map((word) => word.value),
      depth,
      "watch's command",
    );
  return { skip: at };
}

/** `bash -c STRING` (also `-lc`, `-ec`) and `su -c STRING`: the string is read as a command line of its own. */
async function shellString(name: string, rest: Word[], depth: number): Promise<{ finding: Finding } | undefined> {
  for (let at = 0; at < rest.length; at++) {
    const value = rest[at]!.value;
    if (value === undefined) return { finding: { unverifiable: `an argument to ${name} that is expanded when it runs (${rest[at]!.text})` } };
    if (value === "--command" || (value.startsWith("-") && !value.startsWith("--") && value.includes("c"))) {
      return evalString([rest[at + 1]?.value], depth, `${name} -c's string`);
    }
    if (value.startsWith("--command=")) return evalString([value.slice("--command=".length)], depth, `${name} --command's string`);
    if (!value.startsWith("-")) return undefined; // a script file: what it runs is not in the line
  }
  return undefined;
}

/** `find ... -exec CMD ... ;` (and -execdir, -ok, -okdir): each command it runs. */
async function findExec(rest: Word[], depth: number): Promise<{ finding: Finding } | undefined> {
  for (let at = 0; at < rest.length; at++) {
    if (!["-exec", "-execdir", "-ok", "-okdir"].includes(rest[at]!.value ?? "")) continue;
    const end = rest.findIndex((word, i) => i > at && (word.value === ";" || word.value === "+"));
    const found = await inCommand(rest.slice(at + 1, end === -1 ? undefined : end), depth);
    if (found) return { finding: found };
  }
  return undefined;
}

async function evalString(parts: Array<string | undefined>, depth: number, what: string): Promise<{ finding: Finding } | undefined> {
  if (parts.some((part) => part === undefined)) return { finding: { unverifiable: `${what}, expanded when it runs` } };
  const found = await findBanned(parts.join(" "), depth + 1);
  return found && { finding: found };
}

function shorten(text: string): string {
  return text.length <= 120 ? text : `${text.slice(0, 117)}...`;
}
