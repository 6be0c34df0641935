// Owns the goose child's tools: their input schemas, and the text each one answers with.
import { z } from "zod";
import { backgroundRefusal, LOCAL_PRINCIPAL } from "../../children/child.js";
import { textResult } from "../../shared/tool-results.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import { excerpt, formatDuration, plural } from "./format.js";
import type { GooseChild } from "./goose-child.js";
import { ALLOWED_FLAGS_TEXT } from "../../config/virtual/goose-options.js";
import { DEFAULT_LIMIT, outputView } from "./output-view.js";
import { listView, statusReport, statusView } from "./status-view.js";

const processId = z.string().describe("The gosling's id (from run_goose or list_goslings); an unambiguous first 8+ characters will do");
const prompt = (what: string) => z.string().min(1).describe(what);

const READ_ONLY = { readOnlyHint: true, openWorldHint: false };

function follow(id: string): string {
  return [
    "Follow it with:",
    `- get_gosling_status with process_id="${id}" (working or idle)`,
    `- get_gosling_output with process_id="${id}" (its transcript)`,
    `- resource goslings://${id}/output (you are notified when each turn ends)`,
  ].join("\n");
}

export function gooseTools(goose: GooseChild): VirtualTool[] {
  return [
    defineTool({
      name: "run_goose",
      description: `Start a Goose agent ("gosling") on a prompt in the background and return at once with its id. Options are goose run flags: ${ALLOWED_FLAGS_TEXT}.`,
      input: z.strictObject({
        prompt: prompt("The task for the gosling"),
        options: z
          .array(z.string())
          .describe(`goose run flags as separate strings, e.g. ["--model", "gpt-4o"]. Allowed: ${ALLOWED_FLAGS_TEXT}`)
          .optional(),
      }),
      run: async (args, ctx) => {
        if (ctx.endsWithCall) throw backgroundRefusal("a gosling (it runs in the background)");
        const { gosling } = await goose.launchGosling(args.prompt, args.options ?? [], ctx);
        return textResult(
          [
            `Started gosling ${gosling.id} (Goose session ${gosling.session}).`,
            "",
            `Prompt: ${excerpt(args.prompt, 200)}`,
            "",
            follow(gosling.id),
          ].join("\n"),
        );
      },
    }),
    defineTool({
      name: "list_goslings",
      description: "List goslings with a status summary: id, status, runtime and the start of the first prompt.",
      input: z.strictObject({
        status: z.enum(["all", "running", "completed", "error", "released"]).describe("Only goslings with this status (default all)").optional(),
      }),
      annotations: READ_ONLY,
      run: async (args, ctx) => textResult(listView(goose.visibleTo(ctx), args.status ?? "all")),
    }),
    defineTool({
      name: "get_gosling_output",
      description:
        "A gosling's transcript by lines (0-based offset, default limit 100) under a header with its status, times, tokens and every prompt.",
      input: z.strictObject({
        process_id: processId,
        offset: z.int().min(0).describe("First line to show, 0-based (default 0)").optional(),
        limit: z.int().min(1).describe(`Lines to show (default ${DEFAULT_LIMIT})`).optional(),
        full_output: z.boolean().describe("The whole transcript, whatever offset and limit say").optional(),
      }),
      annotations: READ_ONLY,
      run: async (args, ctx) => {
        const request = { offset: args.offset ?? 0, limit: args.limit ?? DEFAULT_LIMIT, full: args.full_output === true };
        return textResult(outputView(goose.find(args.process_id, ctx), request, goose.settings));
      },
    }),
    defineTool({
      name: "get_gosling_status",
      description: "Whether a gosling is working or idle, and for how long (all goslings without process_id).",
      input: z.strictObject({ process_id: processId.optional() }),
      annotations: READ_ONLY,
      run: async (args, ctx) => {
        if (args.process_id === undefined) return textResult(statusReport(goose.visibleTo(ctx)));
        return textResult(statusView(goose.find(args.process_id, ctx), goose.settings.maxPrompts, goose.settings.maxRuntimeMinutes));
      },
    }),
    defineTool({
      name: "send_prompt_to_gosling",
      description: "A follow-up turn in the gosling's Goose session. Sent while a turn runs, it is queued and runs after, in order.",
      input: z.strictObject({ process_id: processId, prompt: prompt("The follow-up prompt") }),
      run: async (args, ctx) => {
        const target = goose.find(args.process_id, ctx);
        goose.checkOwner(target, ctx);
        const { gosling, entry, ahead } = goose.send(target.id, args.prompt, ctx);
        const when =
          ahead === 0
            ? "It is running now."
            : `It is queued behind ${plural(ahead, "turn")} and runs when ${ahead === 1 ? "that one ends" : "they end"}.`;
        return textResult(
          [`Sent prompt #${entry.number} to gosling ${gosling.id}. ${when}`, "", `Prompt: ${excerpt(entry.text, 200)}`, "", follow(gosling.id)].join(
            "\n",
          ),
        );
      },
    }),
    defineTool({
      name: "release_gosling",
      description: "Stop a gosling (its running turn is killed, queued prompts are dropped); its transcript stays readable.",
      input: z.strictObject({ process_id: processId }),
      annotations: { destructiveHint: true },
      run: async (args, ctx) => {
        const gosling = goose.find(args.process_id, ctx);
        goose.checkOwner(gosling, ctx);
        if (gosling.status === "released")
          return textResult(
            `Gosling ${gosling.id} was already released (${gosling.releaseNote ?? "released"}). get_gosling_output still shows its transcript.`,
          );
        const { wasWorking, dropped } = await goose.release(gosling, "released with release_gosling");
        const before = wasWorking
          ? `It was working; its turn was stopped after ${formatDuration(gosling.runtimeMs())} of work in all`
          : "It was idle";
        const drop = dropped > 0 ? `, and ${plural(dropped, "queued prompt")} ${dropped === 1 ? "was" : "were"} dropped` : "";
        return textResult(
          `Released gosling ${gosling.id}. ${before}${drop}.\n\nIts transcript stays readable: get_gosling_output with process_id="${gosling.id}", or goslings://${gosling.id}/output.`,
        );
      },
    }),
    defineTool({
      name: "terminate_all_goslings",
      description: "Release every gosling you started: running turns are killed, queued prompts dropped; transcripts stay readable.",
      input: z.strictObject({}),
      annotations: { destructiveHint: true },
      run: async (_args, ctx) => {
        const principal = ctx.caller?.principal ?? LOCAL_PRINCIPAL;
        const live = goose.all().filter((gosling) => gosling.status !== "released" && goose.ownerOf(gosling) === principal);
        if (live.length === 0) return textResult("No goslings to terminate.");
        const working = live.filter((gosling) => gosling.working).length;
        await Promise.all(live.map((gosling) => goose.release(gosling, "released with terminate_all_goslings")));
        return textResult(
          `Terminated ${plural(live.length, "gosling")} (${working} working, ${live.length - working} idle). Their transcripts stay readable with get_gosling_output.`,
        );
      },
    }),
    defineTool({
      name: "dispatch_agent",
      description: "Run a one-off Goose agent to completion and return its final answer (up to [virtual.goose] dispatch_timeout_minutes).",
      input: z.strictObject({
        prompt: prompt("The task; the answer is the agent's last message"),
        path: z.string().min(1).describe("Working directory for the agent (default: the goose child's cwd)").optional(),
      }),
      run: async (args, ctx) => goose.dispatch(args.prompt, args.path, ctx),
    }),
  ];
}
