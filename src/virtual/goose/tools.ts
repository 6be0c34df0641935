// Owns the goose child's tools: their input schemas, and the text each one answers with.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../../children/child.js";
import { toolDefinition, type VirtualTool } from "../virtual-child.js";
import { excerpt, formatDuration, plural } from "./format.js";
import type { GooseChild } from "./goose-child.js";
import { ALLOWED_FLAGS_TEXT } from "../../config/virtual/goose-options.js";
import { DEFAULT_LIMIT, outputView } from "./output-view.js";
import { listView, statusReport, statusView, type StatusFilter } from "./status-view.js";

const processId = { type: "string", description: "The gosling's id (from run_goose or list_goslings); an unambiguous first 8+ characters will do" };
const prompt = (what: string) => ({ type: "string", minLength: 1, description: what });

const READ_ONLY = { readOnlyHint: true, openWorldHint: false };

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

function follow(id: string): string {
  return [
    "Follow it with:",
    `- get_gosling_status with process_id="${id}" (working or idle)`,
    `- get_gosling_output with process_id="${id}" (its transcript)`,
    `- resource goslings://${id}/output (you are notified when each turn ends)`,
  ].join("\n");
}

export function gooseTools(goose: GooseChild): VirtualTool[] {
  const run = (
    definition: Tool,
    handler: (args: Record<string, unknown>, ctx: CallContext) => Promise<CallToolResult> | CallToolResult,
  ): VirtualTool => ({
    definition,
    run: async (args, ctx) => handler(args, ctx),
  });
  return [
    run(
      toolDefinition(
        "run_goose",
        `Start a Goose agent ("gosling") on a prompt in the background and return at once with its id. Options are goose run flags: ${ALLOWED_FLAGS_TEXT}.`,
        {
          prompt: prompt("The task for the gosling"),
          options: {
            type: "array",
            items: { type: "string" },
            description: `goose run flags as separate strings, e.g. ["--model", "gpt-4o"]. Allowed: ${ALLOWED_FLAGS_TEXT}`,
          },
        },
        ["prompt"],
      ),
      (args, ctx) => {
        const { gosling } = goose.launchGosling(args.prompt as string, (args.options as string[] | undefined) ?? [], ctx);
        return text(
          [
            `Started gosling ${gosling.id} (Goose session ${gosling.session}).`,
            "",
            `Prompt: ${excerpt(args.prompt as string, 200)}`,
            "",
            follow(gosling.id),
          ].join("\n"),
        );
      },
    ),
    run(
      toolDefinition(
        "list_goslings",
        "List goslings with a status summary: id, status, runtime and the start of the first prompt.",
        {
          status: {
            type: "string",
            enum: ["all", "running", "completed", "error", "released"],
            description: "Only goslings with this status (default all)",
          },
        },
        [],
        READ_ONLY,
      ),
      (args) => text(listView(goose.all(), (args.status as StatusFilter | undefined) ?? "all")),
    ),
    run(
      toolDefinition(
        "get_gosling_output",
        "A gosling's transcript by lines (0-based offset, default limit 100) under a header with its status, times, tokens and every prompt.",
        {
          process_id: processId,
          offset: { type: "integer", minimum: 0, description: "First line to show, 0-based (default 0)" },
          limit: { type: "integer", minimum: 1, description: `Lines to show (default ${DEFAULT_LIMIT})` },
          full_output: { type: "boolean", description: "The whole transcript, whatever offset and limit say" },
        },
        ["process_id"],
        READ_ONLY,
      ),
      (args) => {
        const request = {
          offset: (args.offset as number | undefined) ?? 0,
          limit: (args.limit as number | undefined) ?? DEFAULT_LIMIT,
          full: args.full_output === true,
        };
        return text(outputView(goose.find(args.process_id as string), request, goose.settings));
      },
    ),
    run(
      toolDefinition(
        "get_gosling_status",
        "Whether a gosling is working or idle, and for how long (all goslings without process_id).",
        { process_id: processId },
        [],
        READ_ONLY,
      ),
      (args) => {
        if (args.process_id === undefined) return text(statusReport(goose.all()));
        return text(statusView(goose.find(args.process_id as string), goose.settings.maxPrompts, goose.settings.maxRuntimeMinutes));
      },
    ),
    run(
      toolDefinition(
        "send_prompt_to_gosling",
        "A follow-up turn in the gosling's Goose session. Sent while a turn runs, it is queued and runs after, in order.",
        { process_id: processId, prompt: prompt("The follow-up prompt") },
        ["process_id", "prompt"],
      ),
      (args, ctx) => {
        const { gosling, entry, ahead } = goose.send(args.process_id as string, args.prompt as string, ctx);
        const when =
          ahead === 0
            ? "It is running now."
            : `It is queued behind ${plural(ahead, "turn")} and runs when ${ahead === 1 ? "that one ends" : "they end"}.`;
        return text(
          [`Sent prompt #${entry.number} to gosling ${gosling.id}. ${when}`, "", `Prompt: ${excerpt(entry.text, 200)}`, "", follow(gosling.id)].join(
            "\n",
          ),
        );
      },
    ),
    run(
      toolDefinition(
        "release_gosling",
        "Stop a gosling (its running turn is killed, queued prompts are dropped); its transcript stays readable.",
        { process_id: processId },
        ["process_id"],
        { destructiveHint: true },
      ),
      async (args) => {
        const gosling = goose.find(args.process_id as string);
        if (gosling.status === "released")
          return text(
            `Gosling ${gosling.id} was already released (${gosling.releaseNote ?? "released"}). get_gosling_output still shows its transcript.`,
          );
        const { wasWorking, dropped } = await goose.release(gosling, "released with release_gosling");
        const before = wasWorking
          ? `It was working; its turn was stopped after ${formatDuration(gosling.runtimeMs())} of work in all`
          : "It was idle";
        const drop = dropped > 0 ? `, and ${plural(dropped, "queued prompt")} ${dropped === 1 ? "was" : "were"} dropped` : "";
        return text(
          `Released gosling ${gosling.id}. ${before}${drop}.\n\nIts transcript stays readable: get_gosling_output with process_id="${gosling.id}", or goslings://${gosling.id}/output.`,
        );
      },
    ),
    run(
      toolDefinition(
        "terminate_all_goslings",
        "Release every gosling: running turns are killed, queued prompts dropped; transcripts stay readable.",
        {},
        [],
        { destructiveHint: true },
      ),
      async () => {
        const live = goose.all().filter((gosling) => gosling.status !== "released");
        if (live.length === 0) return text("No goslings to terminate.");
        const working = live.filter((gosling) => gosling.working).length;
        await Promise.all(live.map((gosling) => goose.release(gosling, "released with terminate_all_goslings")));
        return text(
          `Terminated ${plural(live.length, "gosling")} (${working} working, ${live.length - working} idle). Their transcripts stay readable with get_gosling_output.`,
        );
      },
    ),
    run(
      toolDefinition(
        "dispatch_agent",
        "Run a one-off Goose agent to completion and return its final answer (up to [virtual.goose] dispatch_timeout_minutes).",
        {
          prompt: prompt("The task; the answer is the agent's last message"),
          path: { type: "string", minLength: 1, description: "Working directory for the agent (default: the goose child's cwd)" },
        },
        ["prompt"],
      ),
      (args, ctx) => goose.dispatch(args.prompt as string, args.path as string | undefined, ctx),
    ),
  ];
}
