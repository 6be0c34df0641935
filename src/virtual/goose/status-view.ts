// Owns the views of many goslings: list_goslings, get_gosling_status, and the JSON of the goslings:// resources.
import { formatBytes } from "../../shared/byte-size.js";
import { excerpt, formatDuration, formatTime, plural } from "./format.js";
import type { Gosling, GoslingStatus } from "./gosling.js";
import { activity, promptState } from "./output-view.js";

export type StatusFilter = "all" | GoslingStatus;

const STATUSES: GoslingStatus[] = ["running", "completed", "error", "released"];

export function summaryLine(goslings: readonly Gosling[]): string {
  return `Status summary: ${STATUSES.map((status) => `${goslings.filter((g) => g.status === status).length} ${status}`).join(", ")}`;
}

export function listView(goslings: readonly Gosling[], filter: StatusFilter): string {
  const shown = filter === "all" ? goslings : goslings.filter((gosling) => gosling.status === filter);
  const now = Date.now();
  const lines = [`Found ${plural(shown.length, "gosling")}${filter === "all" ? "" : ` with status "${filter}"`}.`, "", summaryLine(goslings), ""];
  if (shown.length === 0) {
    lines.push(goslings.length === 0 ? "No goslings yet: run_goose starts one." : "None match.");
    return lines.join("\n");
  }
  shown.forEach((gosling, i) => {
    lines.push(
      `${i + 1}. ID: ${gosling.id}`,
      `   Status: ${gosling.status}${gosling.working && gosling.queued.length > 0 ? ` (${gosling.queued.length} queued)` : ""}`,
      `   Runtime: ${formatDuration(gosling.runtimeMs(now))}`,
      `   Prompt: ${excerpt(gosling.prompts[0]?.text ?? "", 50)}`,
      "",
    );
  });
  lines.push("get_gosling_output with a process_id shows a gosling's transcript.");
  return lines.join("\n");
}

export function statusView(gosling: Gosling, maxPrompts: number, maxRuntimeMinutes: number): string {
  const now = Date.now();
  const last = gosling.prompts.at(-1);
  const lines = [
    "=== Gosling Status ===",
    "",
    `ID: ${gosling.id}`,
    `Activity: ${activity(gosling, now)}`,
    `Status: ${gosling.status}`,
    `Task: ${excerpt(gosling.prompts[0]?.text ?? "")}`,
    ...(gosling.prompts.length > 1 && last ? [`Last prompt: ${excerpt(last.text)} (${promptState(last)})`] : []),
    `Prompts: ${gosling.prompts.length} of max ${maxPrompts}${gosling.queued.length > 0 ? `, ${gosling.queued.length} queued` : ""}`,
    `Tokens: ${gosling.tokens ?? "not reported yet"}`,
    `Output: ${formatBytes(gosling.transcript.size)} (${plural(gosling.transcript.total, "line")})`,
    `Work time: ${formatDuration(gosling.runtimeMs(now))} of max ${formatDuration(maxRuntimeMinutes * 60_000)}`,
    "",
    nextStep(gosling),
  ];
  return lines.join("\n");
}

export function statusReport(goslings: readonly Gosling[]): string {
  const now = Date.now();
  const working = goslings.filter((gosling) => gosling.working).length;
  const released = goslings.filter((gosling) => gosling.status === "released").length;
  const lines = [
    "=== Gosling Status Report ===",
    "",
    `Total: ${plural(goslings.length, "gosling")} (${working} working, ${goslings.length - working - released} idle, ${released} released)`,
    "",
  ];
  if (goslings.length === 0) lines.push("No goslings yet: run_goose starts one.");
  goslings.forEach((gosling, i) => {
    lines.push(
      `${i + 1}. ID: ${gosling.id}`,
      `   Activity: ${activity(gosling, now)}`,
      `   Status: ${gosling.status}`,
      `   Task: ${excerpt(gosling.prompts[0]?.text ?? "", 50)}`,
      `   Tokens: ${gosling.tokens ?? "not reported yet"}`,
      `   Output: ${formatBytes(gosling.transcript.size)} (${plural(gosling.transcript.total, "line")})`,
      "",
    );
  });
  return lines.join("\n").trimEnd();
}

function nextStep(gosling: Gosling): string {
  if (gosling.status === "released") return "It was released; get_gosling_output still shows its transcript.";
  if (gosling.working)
    return "It is working: wait for it to go idle (you are notified when a turn ends), or queue a follow-up with send_prompt_to_gosling.";
  return "It is idle: read its answer with get_gosling_output, continue with send_prompt_to_gosling, or release_gosling.";
}

/** The JSON of goslings://<id> and of each entry of goslings://list. */
export function goslingJson(gosling: Gosling, detailed: boolean): Record<string, unknown> {
  const now = Date.now();
  const base = {
    id: gosling.id,
    session: gosling.session,
    kind: gosling.kind,
    transport: gosling.transport ?? null,
    status: gosling.status,
    activity: gosling.status === "released" ? "released" : gosling.working ? "working" : "idle",
    started_at: formatTime(gosling.createdAt),
    released_at: gosling.releasedAt ? formatTime(gosling.releasedAt) : null,
    runtime_ms: gosling.runtimeMs(now),
    tokens: gosling.tokens,
    prompt: gosling.prompts[0]?.text ?? "",
    prompt_count: gosling.prompts.length,
    queued: gosling.queued.length,
    output_lines: gosling.transcript.total,
  };
  if (!detailed) return base;
  return {
    ...base,
    cwd: gosling.cwd,
    release_note: gosling.releaseNote ?? null,
    output_bytes: gosling.transcript.size,
    dropped_lines: gosling.transcript.firstKept,
    prompts: gosling.prompts.map((prompt) => ({
      number: prompt.number,
      text: prompt.text,
      at: formatTime(prompt.at),
      state: prompt.state,
      tokens: prompt.tokens ?? null,
      problem: prompt.problem ?? null,
    })),
  };
}
