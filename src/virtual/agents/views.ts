// Owns the text the agents child answers with: a session's status, the list of sessions, and its transcript by lines.
import { formatBytes } from "../../shared/byte-size.js";
import { excerpt, formatDuration, formatTime, plural } from "../goose/format.js";
import type { AgentSession } from "./session.js";
import type { Turn } from "./turn.js";

export const DEFAULT_LIMIT = 100;

export function turnState(turn: Turn): string {
  if (turn.state === "queued" || turn.state === "running") return turn.state;
  const took = turn.startedAt && turn.endedAt ? ` in ${formatDuration(turn.endedAt.getTime() - turn.startedAt.getTime())}` : "";
  return turn.problem ? `${turn.state}${took}: ${turn.problem}` : `${turn.state}${took}`;
}

/** "working on prompt 2 for 3.2s (1 queued)", "idle for 12.0s", "released (...)". */
export function activity(session: AgentSession, now = Date.now()): string {
  if (session.status === "released") return `released (${session.releaseNote ?? "released"})`;
  if (session.status === "failed") return `failed (${session.problem ?? "unknown"})`;
  const turn = session.current;
  const queued = session.queued.length;
  const more = queued > 0 ? ` (${queued} queued)` : "";
  if (turn) return `working on prompt ${turn.number} for ${formatDuration(now - (turn.startedAt?.getTime() ?? now))}${more}`;
  if (session.status === "starting") return `starting${more}`;
  return `idle for ${formatDuration(now - session.lastActivity.getTime())}${more}`;
}

export function statusView(session: AgentSession): string {
  const lines = [
    `=== Agent session ${session.id} ===`,
    `Agent: ${session.config.name}${session.pid !== undefined ? ` (process ${session.pid})` : ""}`,
    `ACP session: ${session.acpSessionId ?? "not made yet"}`,
    `Folder: ${session.cwd}`,
    `Status: ${activity(session)}`,
    `Started: ${formatTime(session.createdAt)}`,
    `Permission policy: ${session.config.permission}`,
    `Prompts: ${session.turns.length}`,
    ...session.turns.map((turn) => `  ${turn.number}. ${excerpt(turn.text)} (${turnState(turn)})`),
  ];
  if (session.transcript.firstKept > 0) {
    lines.push(
      `Dropped: the oldest ${plural(session.transcript.firstKept, "line")} (${formatBytes(session.transcript.droppedBytesCount)}), under max_output_bytes = ${session.config.maxOutputBytes}`,
    );
  }
  return lines.join("\n");
}

export function listView(sessions: AgentSession[], status: string): string {
  const shown = sessions.filter((session) => status === "all" || session.status === status);
  if (shown.length === 0) return status === "all" ? "No agent sessions." : `No agent sessions with status ${status}.`;
  return [
    `${plural(shown.length, "agent session")}:`,
    ...shown.map(
      (session) =>
        `- ${session.id} ${session.config.name} ${session.status}: ${activity(session)}; ${excerpt(session.turns[0]?.text ?? "(no prompt yet)", 60)}`,
    ),
  ].join("\n");
}

export function outputView(session: AgentSession, offset: number, limit: number): string {
  const page = session.transcript.page(offset, limit);
  const head = `=== Agent session ${session.id} (${session.config.name}): ${activity(session)} ===`;
  if (page.total === 0) return `${head}\n(no output yet)`;
  if (page.lines.length === 0) return `${head}\n(no lines at offset ${offset}; lines run from ${page.firstKept} to ${page.total - 1})`;
  const parts = [head];
  if (offset < page.firstKept) parts.push(`(lines before ${page.firstKept} were dropped under max_output_bytes)`);
  parts.push(`=== Lines ${page.start}-${page.end - 1} of ${page.total} ===`, ...page.lines);
  if (page.end < page.total) parts.push(`=== More: offset=${page.end} ===`);
  return parts.join("\n");
}

/** A session as JSON, for its resource. */
export function sessionJson(session: AgentSession): Record<string, unknown> {
  return {
    session_id: session.id,
    agent: session.config.name,
    acp_session_id: session.acpSessionId ?? null,
    status: session.status,
    cwd: session.cwd,
    started_at: session.createdAt.toISOString(),
    prompts: session.turns.map((turn) => ({
      number: turn.number,
      state: turn.state,
      stop_reason: turn.stopReason ?? null,
      problem: turn.problem ?? null,
    })),
  };
}
