// Owns get_gosling_output's text: a header (status, times, every prompt), a page of the transcript, pagination.
import { formatBytes } from "../../shared/byte-size.js";
import { excerpt, formatDuration, formatTime, plural } from "./format.js";
import type { Gosling, PromptEntry } from "./gosling.js";

export const DEFAULT_LIMIT = 100;

export interface OutputRequest {
  offset: number;
  limit: number;
  full: boolean;
}

export interface ViewLimits {
  maxOutputBytes: number;
  maxPrompts: number;
  maxRuntimeMinutes: number;
}

export function outputView(gosling: Gosling, request: OutputRequest, limits: ViewLimits): string {
  const transcript = gosling.transcript;
  const limit = request.full ? Number.MAX_SAFE_INTEGER : request.limit;
  const page = transcript.page(request.full ? 0 : request.offset, limit);
  const parts = [header(gosling, limits)];
  if (page.total === 0) {
    parts.push("=== Output (0-0 of 0 lines) ===", "", "(no output yet)");
    return parts.join("\n");
  }
  if (page.lines.length === 0) {
    parts.push(
      `=== Output (none of ${page.total} lines at offset ${request.offset}) ===`,
      "",
      `(the transcript has ${plural(page.total, "line")}; offsets run from ${page.firstKept} to ${page.total - 1})`,
    );
    return parts.join("\n");
  }
  if (!request.full && request.offset < page.firstKept) {
    parts.push(`(lines before offset ${page.firstKept} were dropped under max_output_bytes; showing from there)`, "");
  }
  parts.push(`=== Output (${page.start + 1}-${page.end} of ${page.total} lines) ===`, "", ...page.lines);
  if (page.end < page.total) {
    parts.push(
      "",
      "=== Pagination ===",
      `Showing lines ${page.start + 1} to ${page.end} of ${page.total}.`,
      `Next page: offset=${page.end} limit=${request.limit}`,
      "Whole transcript: full_output=true",
    );
  }
  return parts.join("\n");
}

function header(gosling: Gosling, limits: ViewLimits): string {
  const now = Date.now();
  const lines = [
    `=== Gosling ${gosling.id} ===`,
    `Session: ${gosling.session} (${gosling.kind})`,
    ...(gosling.transport
      ? [`Runs over: ${gosling.transport}${gosling.conversation === gosling.session ? "" : ` (ACP session ${gosling.conversation})`}`]
      : []),
    `Status: ${gosling.status}`,
    `Started: ${formatTime(gosling.createdAt)}`,
    `Duration: ${formatDuration((gosling.releasedAt?.getTime() ?? now) - gosling.createdAt.getTime())}${gosling.status === "released" ? "" : " (so far)"}`,
    `Activity: ${activity(gosling, now)}`,
    `Work time: ${formatDuration(gosling.runtimeMs(now))} (max_runtime_minutes = ${limits.maxRuntimeMinutes})`,
    `Tokens: ${gosling.tokens ?? "not reported yet"}`,
    `Prompts: ${gosling.prompts.length} (max_prompts = ${limits.maxPrompts})`,
    ...gosling.prompts.map((prompt) => `  ${prompt.number}. [${formatTime(prompt.at)}] ${excerpt(prompt.text)} (${promptState(prompt)})`),
  ];
  const transcript = gosling.transcript;
  if (transcript.firstKept > 0) {
    lines.push(
      `Dropped: the oldest ${plural(transcript.firstKept, "line")} (${formatBytes(transcript.droppedBytesCount)}), to keep the transcript under max_output_bytes = ${limits.maxOutputBytes}`,
    );
  }
  if (gosling.releasedAt) lines.push(`Released: ${formatTime(gosling.releasedAt)} (${gosling.releaseNote ?? "released"})`);
  return `${lines.join("\n")}\n`;
}

export function promptState(prompt: PromptEntry): string {
  if (prompt.state === "queued") return "queued";
  if (prompt.state === "running") return "running";
  const took = prompt.startedAt && prompt.endedAt ? ` in ${formatDuration(prompt.endedAt.getTime() - prompt.startedAt.getTime())}` : "";
  return prompt.problem ? `${prompt.state}${took}: ${prompt.problem}` : `${prompt.state}${took}`;
}

/** "WORKING for 3.2s on prompt 2 (1 queued)", "IDLE for 12.0s", "RELEASED". */
export function activity(gosling: Gosling, now = Date.now()): string {
  const since = formatDuration(now - gosling.activitySince.getTime());
  if (gosling.status === "released") return `RELEASED (${gosling.releaseNote ?? "released"})`;
  if (!gosling.working) return `IDLE for ${since}`;
  const queued = gosling.queued.length;
  const on = gosling.running ? ` on prompt ${gosling.running.number}` : "";
  return `WORKING for ${since}${on}${queued > 0 ? ` (${queued} queued)` : ""}`;
}
