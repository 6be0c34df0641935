// Owns dispatch_agent's wait: one turn to its end within dispatch_timeout_minutes, progress meanwhile, the answer.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../../children/child.js";
import { GaggleError } from "../../shared/errors.js";
import { formatDuration } from "./format.js";
import type { Gosling, PromptEntry } from "./gosling.js";
import { timerDelay } from "../../shared/timer-delay.js";

/** How often a waiting dispatch reports progress (new transcript lines), which also keeps client timeouts alive. */
const PROGRESS_EVERY_MS = 1000;

interface DispatchOwner {
  readonly settings: { dispatchTimeoutMinutes: number };
  release(gosling: Gosling, note: string): Promise<unknown>;
}

export async function runDispatch(owner: DispatchOwner, gosling: Gosling, entry: PromptEntry, ctx: CallContext): Promise<CallToolResult> {
  const minutes = owner.settings.dispatchTimeoutMinutes;
  const timeoutMs = minutes * 60_000;
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let progress: NodeJS.Timeout | undefined;
  let stopListening: (() => void) | undefined;
  try {
    const outcome = await new Promise<"ended" | "timeout" | "cancelled">((resolve) => {
      void gosling.ended(entry).then(() => resolve("ended"));
      timer = setTimeout(() => resolve("timeout"), timerDelay(timeoutMs));
      stopListening = ctx.cancel?.onAbort(() => resolve("cancelled"));
      if (ctx.onprogress) progress = reportProgress(gosling, ctx.onprogress);
    });
    if (outcome === "timeout") {
      const note = `dispatch_agent timed out after ${formatDuration(timeoutMs)} (dispatch_timeout_minutes = ${minutes})`;
      await owner.release(gosling, note);
      throw new GaggleError("TIMEOUT", `${note}; the agent was stopped`, {
        hint: `get_gosling_output with process_id="${gosling.id}" shows how far it got; raise [virtual.goose] dispatch_timeout_minutes for longer tasks`,
      });
    }
    if (outcome === "cancelled") {
      await owner.release(gosling, "the dispatch_agent call was cancelled");
      throw new GaggleError("SESSION_ERROR", "dispatch_agent was cancelled by the client; the agent was stopped");
    }
    await owner.release(gosling, "dispatch_agent finished");
    const took = formatDuration(Date.now() - started);
    if (entry.state !== "completed") {
      throw new GaggleError("SERVER_FAILED", `the dispatched agent failed after ${took}: ${entry.problem ?? entry.state}`, {
        hint: `get_gosling_output with process_id="${gosling.id}" shows its transcript`,
      });
    }
    const tokens = entry.tokens != null ? `, ${entry.tokens} tokens` : "";
    return {
      content: [
        { type: "text", text: entry.answer || "(the agent finished without a text answer)" },
        { type: "text", text: `(gosling ${gosling.id}, ${took}${tokens}; get_gosling_output with process_id="${gosling.id}" shows its transcript)` },
      ],
    };
  } finally {
    clearTimeout(timer);
    clearInterval(progress);
    stopListening?.();
  }
}

function reportProgress(gosling: Gosling, onprogress: NonNullable<CallContext["onprogress"]>): NodeJS.Timeout {
  let reported = gosling.transcript.total;
  return setInterval(() => {
    const total = gosling.transcript.total;
    if (total === reported) return;
    reported = total;
    onprogress({ progress: total, message: gosling.transcript.tail(1)[0]?.slice(0, 200) ?? "" });
  }, PROGRESS_EVERY_MS);
}
