// Owns dispatch_agent: one prompt in a new session, run to its end while the call waits, progress sent as the
// transcript grows, the agent's answer returned and the session released.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../../children/child.js";
import { GaggleError } from "../../shared/errors.js";
import { formatDuration } from "../goose/format.js";
import type { AgentsChild } from "./agents-child.js";
import type { Ask } from "./permissions.js";

export async function runDispatch(
  agents: AgentsChild,
  request: { agent?: string | undefined; prompt: string; cwd?: string | undefined },
  ctx: CallContext,
): Promise<CallToolResult> {
  const caller = ctx.caller;
  // The call is in flight for the whole turn: the agent's questions travel in it.
  const ask: Ask | undefined = caller && ((question, signal) => caller.forward(question, signal));
  const { session, turn } = await agents.start({ ...request }, ctx, ask);
  const started = Date.now();
  let stopWatching: (() => void) | undefined;
  let stopListening: (() => void) | undefined;
  try {
    const onprogress = ctx.onprogress;
    if (onprogress) {
      stopWatching = session.watch(() => {
        const total = session.transcript.total;
        onprogress({ progress: total, message: session.transcript.tail(1)[0]?.slice(0, 200) ?? "" });
      });
    }
    const cancelled = new Promise<"cancelled">((resolve) => (stopListening = ctx.cancel?.onAbort(() => resolve("cancelled"))));
    const outcome = await Promise.race([turn!.done.then(() => "ended" as const), cancelled]);
    if (outcome === "cancelled") {
      await agents.release(session, "the dispatch_agent call was cancelled");
      throw new GaggleError("SESSION_ERROR", "dispatch_agent was cancelled by the client; the agent's turn was cancelled");
    }
    await agents.release(session, "dispatch_agent finished");
    const took = formatDuration(Date.now() - started);
    if (turn!.state !== "completed") {
      throw new GaggleError("SERVER_FAILED", `the dispatched agent's turn ${turn!.state} after ${took}${turn!.problem ? `: ${turn!.problem}` : ""}`, {
        hint: `get_agent_output with session_id="${session.id}" shows its transcript`,
      });
    }
    return {
      content: [
        { type: "text", text: turn!.answer || "(the agent finished without a text answer)" },
        {
          type: "text",
          text: `(agent session ${session.id}, ${session.config.name}, ${took}; get_agent_output with session_id="${session.id}" shows its transcript)`,
        },
      ],
    };
  } finally {
    stopWatching?.();
    stopListening?.();
  }
}
