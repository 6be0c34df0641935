// The JSON shapes of a process that tools, resources and notices answer with.
import type { ManagedProcess } from "./managed-process.js";
import { readView, viewText } from "./log-view.js";

export function logUri(pid: number): string {
  return `process://${pid}/log`;
}

/** One line of a listing. */
export function summaryView(entry: ManagedProcess) {
  return {
    pid: entry.pid,
    status: entry.status,
    command: entry.command,
    started_at: entry.startedAt.toISOString(),
    runtime_ms: entry.runtimeMs,
    exit_code: entry.exitCode,
  };
}

/** Everything known about a process except its output. `viewer` is the principal asking. */
export function detailView(entry: ManagedProcess, viewer: string) {
  const { output } = entry;
  return {
    pid: entry.pid,
    status: entry.status,
    command: entry.command,
    cwd: entry.spec.cwd,
    started_at: entry.startedAt.toISOString(),
    ended_at: entry.endedAt?.toISOString() ?? null,
    runtime_ms: entry.runtimeMs,
    exit_code: entry.exitCode,
    signal: entry.signal,
    timeout_ms: entry.spec.timeoutMs,
    owned: entry.spec.owner === viewer,
    ...(exitNote(entry) && { note: exitNote(entry) }),
    output_bytes: output.bytes,
    output_lines: output.lines,
    truncated: output.truncated,
    dropped_bytes: output.droppedBytes,
    ...(output.writeError && { log_error: `writing the log failed (${output.writeError}); later output was dropped` }),
    log_uri: logUri(entry.pid),
    log_file: output.path,
  };
}

/** The details and a view of the output: `head` lines from the start, `tail` from the end, and how many lie between. */
export async function outputView(entry: ManagedProcess, viewer: string, head: number, tail: number) {
  // The details and the cap line are taken with the view's extent, before the read: all describe the same bytes.
  const details = detailView(entry, viewer);
  const cap = entry.output.truncated
    ? [`[output truncated: ${entry.output.droppedBytes} bytes past the ${entry.output.capBytes}-byte cap were dropped]`]
    : [];
  const view = await readView(() => entry.openLog(), entry.output, head, tail);
  return {
    ...details,
    head_lines: view.head.length,
    tail_lines: view.tail.length,
    omitted_lines: view.omitted,
    output: [viewText(view), ...cap].filter((part) => part !== "").join("\n"),
  };
}

/** What the owning client is told when its process ends. */
export function endedNotice(entry: ManagedProcess, lastLines: string[]) {
  return {
    event: "process_ended",
    message: `process ${entry.pid} ${entry.status}${entry.exitCode !== null ? ` (exit code ${entry.exitCode})` : entry.signal ? ` (${entry.signal})` : ""} after ${(entry.runtimeMs / 1000).toFixed(1)}s: ${entry.command}`,
    pid: entry.pid,
    status: entry.status,
    exit_code: entry.exitCode,
    signal: entry.signal,
    duration_ms: entry.runtimeMs,
    command: entry.command,
    truncated: entry.output.truncated,
    last_lines: lastLines,
    log_uri: logUri(entry.pid),
  };
}

/** The shell's own exit codes for a command it could not run. */
function exitNote(entry: ManagedProcess): string | undefined {
  if (entry.stopNote) return entry.stopNote;
  if (entry.exitCode === 127) return "exit code 127: the shell did not find the command; check its name and PATH";
  if (entry.exitCode === 126) return "exit code 126: the command was found but could not be executed; check its permissions";
  return undefined;
}
