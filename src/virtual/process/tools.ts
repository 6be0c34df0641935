// gg_process_run, gg_process_status and gg_process_kill: their definitions and what each answers.
import { z } from "zod";
import { backgroundRefusal, LOCAL_PRINCIPAL, type CallContext } from "../../children/child.js";
import { jsonResult } from "../../shared/tool-results.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import type { ProcessTable } from "./process-table.js";
import { MAX_TIMER_MS } from "../../shared/timer-delay.js";
import { detailView, logUri, outputView, summaryView } from "./views.js";

/** Who makes a call: its principal owns what it starts, its session is told when that ends. Without a client (one-shot commands), the local user. */
export function callerOf(ctx: CallContext): { principal: string; session: string } {
  return { principal: ctx.caller?.principal ?? LOCAL_PRINCIPAL, session: ctx.caller?.sessionId ?? "local" };
}

const PID = z.int().min(1).describe("A pid gg_process_run returned.");
const MAX_VIEW_LINES = 10_000;
const viewLines = (description: string) => z.int().min(0).max(MAX_VIEW_LINES).describe(description).optional();

/** `baseDir`: the config file's folder, where commands run unless they name a cwd. */
export function processTools(table: ProcessTable, defaultTimeoutMs: number, baseDir: string): VirtualTool[] {
  return [
    defineTool({
      name: "gg_process_run",
      title: "Run a command in the background",
      description:
        "Starts a shell command in the background and returns at once with its pid; the command runs in its own " +
        "process group with its output (stdout and stderr together) captured to a log. You are notified when it " +
        "ends. Use gg_process_status to read its output, gg_process_kill to stop it.",
      input: z.strictObject({
        command: z.string().min(1).describe('A /bin/sh command line, e.g. "npm test 2>&1".'),
        cwd: z
          .string()
          .min(1)
          .describe(`Working directory; relative paths start from ${baseDir} (the folder of gaggle's config file). Defaults to it.`)
          .optional(),
        timeout_ms: z
          .int()
          .min(0)
          .max(MAX_TIMER_MS)
          .describe(`Kill it after this long (status timed_out); 0 = never. Defaults to ${defaultTimeoutMs}.`)
          .optional(),
      }),
      annotations: { destructiveHint: true, openWorldHint: true },
      run: async ({ command, cwd, timeout_ms }, ctx) => {
        if (ctx.endsWithCall) throw backgroundRefusal("a background process");
        const started = await table.run({ command, cwd, timeoutMs: timeout_ms }, callerOf(ctx));
        return jsonResult({
          pid: started.pid,
          status: started.status,
          command: started.command,
          cwd: started.spec.cwd,
          started_at: started.startedAt.toISOString(),
          timeout_ms: started.spec.timeoutMs,
          log_uri: logUri(started.pid),
          log_file: started.output.path,
        });
      },
    }),
    defineTool({
      name: "gg_process_status",
      title: "Background processes and their output",
      description:
        "Without a pid: every process (running first, then recently finished) with status, command, runtime, " +
        "exit code and whether you own it (owned: you started it, from this session or another). With a pid: " +
        "its details and a view of its output, head_lines from the start and tail_lines from the end. Statuses: " +
        "running, completed, failed, timed_out, killed.",
      input: z.strictObject({
        pid: PID.optional(),
        head_lines: viewLines("Lines from the start of the output (default 0)."),
        tail_lines: viewLines("Lines from the end of the output (default 80)."),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async ({ pid, head_lines = 0, tail_lines = 80 }, ctx) => {
        const { principal } = callerOf(ctx);
        if (pid !== undefined) return jsonResult(await outputView(table.get(pid, principal), principal, head_lines, tail_lines));
        const all = table.visibleTo(principal);
        return jsonResult({
          processes: all.map((entry) => ({ ...summaryView(entry), owned: entry.spec.owner === principal })),
          running: all.filter((entry) => entry.running).length,
          finished: all.filter((entry) => !entry.running).length,
        });
      },
    }),
    defineTool({
      name: "gg_process_kill",
      title: "Stop a background process",
      description:
        "Stops a process you started (from any of your sessions), with everything it started: SIGTERM to its whole process group, SIGKILL " +
        "after a grace period. Answers once it is gone, with status killed.",
      input: z.strictObject({ pid: PID }),
      annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: async ({ pid }, ctx) => {
        const { principal } = callerOf(ctx);
        const { process: target, wasRunning } = await table.kill(pid, principal);
        const note = wasRunning ? {} : { note: `process ${target.pid} had already ended (${target.status}); nothing was killed` };
        return jsonResult({ ...detailView(target, principal), ...note });
      },
    }),
  ];
}
