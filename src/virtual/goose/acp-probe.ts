// Owns finding out whether the installed Goose has `goose acp`: its `--help` lists its subcommands.
import { execFile } from "node:child_process";
import type { GooseLaunch } from "./turns.js";

/** How long `goose --help` gets to answer; past it, gaggle takes Goose to have no `acp`. */
export const PROBE_TIMEOUT_MS = 10_000;

/**
 * Whether `goose [args] --help` names an `acp` subcommand in its command list (clap prints each as an indented
 * line, "  acp   Run goose as an ACP agent server on stdio"). Any failure (no such command, a non-zero exit
 * without such a line, a timeout) means no: goslings then run over `goose run`, as they always could.
 */
export function probeAcp(launch: GooseLaunch, prefixArgs: readonly string[]): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      launch.command,
      [...prefixArgs, "--help"],
      { cwd: launch.cwd, env: launch.env, timeout: PROBE_TIMEOUT_MS, maxBuffer: 256 * 1024 },
      (_error, stdout) => resolve(listsAcp(String(stdout))),
    );
  });
}

/** The help text's command list has a line for `acp`. */
export function listsAcp(help: string): boolean {
  const lines = help.split("\n");
  const start = lines.findIndex((line) => line.trim() === "Commands:");
  if (start === -1) return false;
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith(" ") && !line.startsWith("\t")) return false;
    if (line.trim().split(/\s/)[0] === "acp") return true;
  }
  return false;
}
