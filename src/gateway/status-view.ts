// The JSON shape of a child's status, shared by get_child_status, mcp://children_servers and `gaggle status`.
import type { RoutedStatus } from "../children/router.js";

/** Lines of stderr shown in a status answer; the ring buffer keeps more. */
export const STATUS_STDERR_LINES = 20;

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
    stderr: status.stderrTail.slice(-STATUS_STDERR_LINES),
    calls_served: status.callsServed,
    queue_depth: status.queue.running + status.queue.waiting,
    queue: status.queue,
    tool_count: status.toolCount,
    protocol: status.protocol,
  };
}

export function formatUptime(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${Math.floor(seconds % 60)}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}
