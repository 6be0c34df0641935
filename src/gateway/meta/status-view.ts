// The JSON shape of a child's status, shared by get_child_status, mcp://children_servers and `gaggle status`.
import type { RoutedStatus } from "../../children/router.js";

/** Lines of stderr shown in a status answer; the ring buffer keeps more. */
export const STATUS_STDERR_LINES = 20;
/** ...and characters: one chatty child's debug lines must not flood the context of the model reading a status. */
export const STATUS_STDERR_CHARS = 2000;

export function statusView(status: RoutedStatus) {
  return {
    server_id: status.name,
    status: status.needsAuth ? "needs_auth" : status.state,
    transport: status.kind,
    startup_time: status.startedAt?.toISOString() ?? null,
    uptime_ms: status.startedAt ? Date.now() - status.startedAt.getTime() : null,
    pid: status.pid,
    restarts: status.restarts,
    error: status.lastError,
    stderr: stderrView(status.stderrTail),
    stdout_noise: status.stdoutNoise,
    calls_served: status.callsServed,
    queue_depth: status.queue.running + status.queue.waiting,
    queue: status.queue,
    tool_count: status.toolCount,
    protocol: status.protocol,
  };
}

/**
 * The newest lines of a child's stderr, at most STATUS_STDERR_LINES of them and STATUS_STDERR_CHARS characters
 * together, each line whole, but for a newest line longer than the bound by itself, which keeps its start. When
 * anything is left out, a first line says how many earlier lines and characters.
 */
export function stderrView(lines: string[]): string[] {
  const shown: string[] = [];
  let room = STATUS_STDERR_CHARS;
  for (let at = lines.length - 1; at >= 0 && shown.length < STATUS_STDERR_LINES; at--) {
    const line = lines[at]!;
    if (line.length <= room) {
      shown.unshift(line);
      room -= line.length;
    } else {
      if (shown.length === 0) shown.unshift(`${line.slice(0, room)} [... ${line.length - room} more characters]`);
      break;
    }
  }
  const left = lines.slice(0, lines.length - shown.length);
  if (left.length === 0) return shown;
  const chars = left.reduce((sum, line) => sum + line.length, 0);
  return [`[... ${left.length} earlier ${left.length === 1 ? "line" : "lines"} (${chars} characters) not shown ...]`, ...shown];
}

export function formatUptime(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${Math.floor(seconds % 60)}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}
