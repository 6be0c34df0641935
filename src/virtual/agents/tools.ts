// Owns the agents child's tools: their input schemas, and the text each one answers with.
import { z } from "zod";
import { backgroundRefusal } from "../../children/child.js";
import { textResult } from "../../shared/tool-results.js";
import { excerpt, formatDuration, plural } from "../goose/format.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import type { AgentsChild } from "./agents-child.js";
import { runDispatch } from "./dispatch.js";
import { transcriptUri } from "./resources.js";
import { DEFAULT_LIMIT, listView, outputView, statusView } from "./views.js";

const sessionId = z.string().min(1).describe("The session's id, from start_agent or list_agent_sessions");
const READ_ONLY = { readOnlyHint: true, openWorldHint: false };

function follow(id: string): string {
  return [
    "Follow it with:",
    `- get_agent_status with session_id="${id}"`,
    `- get_agent_output with session_id="${id}" (its transcript by lines)`,
    `- resource ${transcriptUri(id)} (you are notified when each turn ends)`,
  ].join("\n");
}

export function agentsTools(agents: AgentsChild): VirtualTool[] {
  const names = agents.agentNames.map((name) => JSON.stringify(name)).join(", ");
  const agentArg = z
    .string()
    .min(1)
    .describe(`Which agent: one of ${names}${agents.agentNames.length === 1 ? " (the default)" : ""}`);
  return [
    defineTool({
      name: "start_agent",
      description:
        "Start a session with a coding agent over the Agent Client Protocol and return its session_id at once. " +
        "With a prompt, its first turn starts right away; the agent's permission requests come to you as questions.",
      input: z.strictObject({
        agent: agentArg.optional(),
        prompt: z.string().min(1).describe("The first prompt (optional: prompt_agent sends prompts later)").optional(),
        cwd: z.string().min(1).describe("The session's folder, inside the agent's roots (relative: from the first root)").optional(),
        load_session: z
          .string()
          .min(1)
          .describe("An ACP session id (get_agent_status shows it) to resume with session/load, where the agent supports it")
          .optional(),
      }),
      run: async (args, ctx) => {
        if (ctx.endsWithCall) throw backgroundRefusal("an agent session (it runs in the background)");
        const { session } = await agents.start({ agent: args.agent, prompt: args.prompt, cwd: args.cwd, loadSession: args.load_session }, ctx);
        const first = args.prompt === undefined ? "No prompt yet: send one with prompt_agent." : `Prompt: ${excerpt(args.prompt, 200)}`;
        return textResult(
          [`Started agent session ${session.id} (${session.config.name}) in ${session.cwd}.`, "", first, "", follow(session.id)].join("\n"),
        );
      },
    }),
    defineTool({
      name: "prompt_agent",
      description: "Send a prompt to an agent session and return at once. Sent while a turn runs, it is queued and runs after, in order.",
      input: z.strictObject({ session_id: sessionId, prompt: z.string().min(1).describe("The prompt") }),
      run: async (args, ctx) => {
        const session = agents.find(args.session_id, ctx, true);
        const { turn, ahead } = agents.send(session, args.prompt, ctx);
        const when = ahead === 0 ? "It runs now." : `It is queued behind ${plural(ahead, "turn")}.`;
        return textResult([`Sent prompt ${turn.number} to agent session ${session.id}. ${when}`, "", follow(session.id)].join("\n"));
      },
    }),
    defineTool({
      name: "get_agent_output",
      description:
        "An agent session's transcript by lines (0-based offset, default limit 100): message text, thoughts, tool calls with their status and diffs, plans, permission decisions.",
      input: z.strictObject({
        session_id: sessionId,
        offset: z.int().min(0).describe("First line, 0-based (default 0)").optional(),
        limit: z.int().min(1).describe(`Lines to show (default ${DEFAULT_LIMIT})`).optional(),
      }),
      annotations: READ_ONLY,
      run: async (args, ctx) => textResult(outputView(agents.find(args.session_id, ctx), args.offset ?? 0, args.limit ?? DEFAULT_LIMIT)),
    }),
    defineTool({
      name: "get_agent_status",
      description: "An agent session's status, folder and prompts; without session_id, all of your sessions.",
      input: z.strictObject({ session_id: sessionId.optional() }),
      annotations: READ_ONLY,
      run: async (args, ctx) => {
        if (args.session_id !== undefined) return textResult(statusView(agents.find(args.session_id, ctx)));
        const mine = agents.visibleTo(ctx);
        return textResult(mine.length === 0 ? "No agent sessions." : mine.map((session) => statusView(session)).join("\n\n"));
      },
    }),
    defineTool({
      name: "list_agent_sessions",
      description: "Your agent sessions with a status summary.",
      input: z.strictObject({
        status: z
          .enum(["all", "starting", "idle", "working", "released", "failed"])
          .describe("Only sessions with this status (default all)")
          .optional(),
      }),
      annotations: READ_ONLY,
      run: async (args, ctx) => textResult(listView(agents.visibleTo(ctx), args.status ?? "all")),
    }),
    defineTool({
      name: "cancel_agent_turn",
      description: "Cancel the turn an agent session is running (session/cancel); prompts queued behind it still run.",
      input: z.strictObject({ session_id: sessionId }),
      run: async (args, ctx) => {
        const session = agents.find(args.session_id, ctx, true);
        const turn = session.current;
        if (!session.cancel("cancel_agent_turn") || !turn) return textResult(`Agent session ${session.id} runs no turn; nothing to cancel.`);
        return textResult(`Cancelling prompt ${turn.number} of agent session ${session.id}; get_agent_status shows when it has stopped.`);
      },
    }),
    defineTool({
      name: "release_agent",
      description: "End an agent session: its running turn is cancelled, queued prompts dropped; its transcript stays readable.",
      input: z.strictObject({ session_id: sessionId }),
      annotations: { destructiveHint: true },
      run: async (args, ctx) => {
        const session = agents.find(args.session_id, ctx, true);
        if (session.status === "released")
          return textResult(`Agent session ${session.id} was already released (${session.releaseNote ?? "released"}).`);
        const { wasWorking, dropped } = await agents.release(session, "released with release_agent");
        const before = wasWorking ? "It was working; its turn was cancelled" : "It was idle";
        const drop = dropped > 0 ? `, and ${plural(dropped, "queued prompt")} ${dropped === 1 ? "was" : "were"} dropped` : "";
        return textResult(
          `Released agent session ${session.id} after ${formatDuration(Date.now() - session.createdAt.getTime())}. ${before}${drop}.`,
        );
      },
    }),
    defineTool({
      name: "dispatch_agent",
      description:
        "Run one prompt in a new agent session to its end and return the agent's final answer, with progress notifications meanwhile (up to the agent's prompt_timeout_minutes).",
      input: z.strictObject({
        prompt: z.string().min(1).describe("The task; the answer is the agent's message text"),
        agent: agentArg.optional(),
        cwd: z.string().min(1).describe("The session's folder, inside the agent's roots").optional(),
      }),
      run: async (args, ctx) => runDispatch(agents, { agent: args.agent, prompt: args.prompt, cwd: args.cwd }, ctx),
    }),
  ];
}
