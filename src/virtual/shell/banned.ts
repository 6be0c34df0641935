// gomcptest's banned commands (network clients and browsers), found by reading the command with bash's grammar:
// behind paths, wrappers (env, sudo, strace, ...), strings run as commands, shells fed on stdin, and bash's /dev/tcp.
import { basename } from "node:path";
import { GaggleError } from "../../shared/errors.js";
import { everyCommand, type Stdin } from "./every-command.js";
import type { Word } from "./hidden-code.js";
import { runsOf, type Runs } from "./wrappers.js";

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

/** bash opens a network connection for a redirection to one of these (`exec 3<>/dev/tcp/host/80`). */
const NETWORK_DEVICES = ["/dev/tcp/", "/dev/udp/"];

type Finding = { banned: string; text: string } | { unverifiable: string };

/**
 * Throws PERMISSION_DENIED when `command` would run a banned command anywhere bash's grammar can see one, or
 * names a command only at run time (`$CMD`, `$(echo curl)`, a shell reading a pipe), which could be any.
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
    { hint: "write the command out (no $VAR, $( ) or glob in its name, no commands piped into a shell)" },
  );
}

async function findBanned(source: string, depth: number): Promise<Finding | undefined> {
  if (depth > MAX_DEPTH) return { unverifiable: `commands nested in strings more than ${MAX_DEPTH} deep` };
  const read = await everyCommand(source);
  if ("unverifiable" in read) return read;
  const [hidden] = read.hidden;
  if (hidden !== undefined) return { unverifiable: hidden };
  for (const line of read.strings) {
    const found = await findBanned(line, depth + 1);
    if (found) return found;
  }
  for (const target of read.redirects) {
    const device = networkDevice(target);
    if (device) return device;
  }
  for (const { words, stdin } of read.commands) {
    const found = await inCommand(words, stdin, depth);
    if (found) return found;
  }
  // Bash may run commands in what the grammar here could not read (a glob in a group's command name).
  const [unread] = read.unread;
  if (unread !== undefined) return { unverifiable: `a part of the line bash's grammar here cannot read (${JSON.stringify(unread.slice(0, 40))})` };
  return undefined;
}

/** A redirection to bash's /dev/tcp or /dev/udp, or one whose written start could become one. */
function networkDevice(target: Word): Finding | undefined {
  if (target.value !== undefined) {
    const device = NETWORK_DEVICES.find((prefix) => target.value!.startsWith(prefix));
    return device === undefined ? undefined : { banned: `bash's ${device.slice(0, -1)}`, text: target.text };
  }
  const written = /^[^$`"'\\]*/.exec(target.text)![0];
  if (written.length > 1 && NETWORK_DEVICES.some((prefix) => prefix.startsWith(written) || written.startsWith(prefix))) {
    return { unverifiable: `a redirection to ${target.text}, which may be bash's /dev/tcp` };
  }
  return undefined;
}

/** The name a word runs as: its last path component, when that is written out. */
function commandName(word: Word): string | undefined {
  if (word.value !== undefined) return basename(word.value);
  const last = word.text.slice(word.text.lastIndexOf("/") + 1);
  return /^[\w.+-]+$/.test(last) ? last : undefined;
}

/**
 * A simple command, and what it runs in turn (`sudo env X=1 nice curl`, `sh -c '...'`, `... | bash`). `placeholder`:
 * text replaced at run time by an input item (xargs -I, find -exec), which makes a command name holding it unknown.
 */
async function inCommand(words: Word[], stdin: Stdin | undefined, depth: number, placeholder?: string, outer?: string): Promise<Finding | undefined> {
  // A wrapped command is named by the whole command that runs it (`sudo curl x`).
  const text = outer ?? words.map((word) => word.text).join(" ");
  const [word, ...rest] = words;
  if (!word) return undefined;
  if (placeholder !== undefined && word.text.includes(placeholder)) {
    return { unverifiable: `a command name replaced when it runs (${word.text})` };
  }
  const name = commandName(word);
  if (name === undefined) return { unverifiable: `a command name that is expanded when it runs (${word.text})` };
  if (BANNED.has(name)) return { banned: name, text };
  for (const runs of runsOf(name, rest)) {
    if (placeholder !== undefined && runs.kind === "string" && runs.text?.includes(placeholder)) {
      return { unverifiable: `${runs.what}, replaced when it runs` };
    }
    const found = await inRuns(runs, stdin, depth, text);
    if (found) return found;
  }
  return undefined;
}

async function inRuns(runs: Runs, stdin: Stdin | undefined, depth: number, text: string): Promise<Finding | undefined> {
  switch (runs.kind) {
    case "command":
      return inCommand(runs.words, stdin, depth, runs.placeholder, text);
    case "string":
      return runs.text === undefined ? { unverifiable: `${runs.what}, expanded when it runs` } : findBanned(runs.text, depth + 1);
    case "unverifiable":
      return { unverifiable: runs.reason };
    case "stdin":
      if (stdin === undefined) return undefined; // no input: Bash gives none
      if (stdin.from === "file") return stdin.file.value === undefined ? { unverifiable: `${runs.what}, from ${stdin.file.text}` } : undefined; // a script file
      if (stdin.from === "pipe") return { unverifiable: `${runs.what}, fed by a pipe` };
      return stdin.text === undefined ? { unverifiable: `${runs.what}, a here-document expanded when it runs` } : findBanned(stdin.text, depth + 1);
  }
}

function shorten(text: string): string {
  return text.length <= 120 ? text : `${text.slice(0, 117)}...`;
}
