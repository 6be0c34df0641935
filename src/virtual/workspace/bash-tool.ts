// Bash: a command in the session's persistent shell, after the banned-command guard and the policy.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { CallContext } from "../../children/child.js";
import { cancelledError } from "../../children/calls/cancellation.js";
import { GaggleError } from "../../shared/errors.js";
import { textResult } from "../../shared/tool-results.js";
import { checkPolicy, type Policy } from "../process/policy.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import { BANNED_COMMANDS, refuseBanned } from "../shell/banned.js";
import type { Workspace } from "./place.js";
import type { CommandRun, Shell } from "./shell.js";

export interface Shells {
  /** The call's session's shell, started where the call stands if it has none (or its last one ended). */
  shellFor(ctx: CallContext): Promise<Shell>;
}

export function bashTool(workspace: Workspace, shells: Shells, policy: Policy): VirtualTool {
  const { timeoutMs, maxTimeoutMs, maxOutputChars, maxProcesses } = workspace.settings;
  return defineTool({
    name: "Bash",
    title: "Run a command in a persistent shell",
    description:
      "Runs a bash command in this session's persistent shell: the working directory, exported and other variables, " +
      "functions and shell options a command leaves stay for the next command. stdout and stderr come back together, " +
      `in order, followed by the exit status; output past ${maxOutputChars} characters is cut, with a note saying how much. ` +
      `A command runs at most timeout ms (default ${timeoutMs}, at most ${maxTimeoutMs}); past it, it is killed with every ` +
      "process it started, and the shell keeps its state. Commands read no input (stdin is empty): pass everything as " +
      `arguments. Banned, also behind paths, wrappers and substitutions: ${BANNED_COMMANDS.join(", ")}. ` +
      "Prefer GrepTool, GlobTool, View and LS to grep, find, cat and ls.",
    input: z.strictObject({
      command: z.string().min(1).describe("The command to run, as you would type it in bash"),
      timeout: z
        .int()
        .min(1)
        .max(maxTimeoutMs)
        .describe(`Milliseconds before the command is killed (default ${timeoutMs}, at most ${maxTimeoutMs})`)
        .optional(),
    }),
    annotations: { destructiveHint: true, openWorldHint: true },
    run: async ({ command, timeout }, ctx) => {
      await refuseBanned(command);
      // The shell's working directory as `cd` left it, symlinks and all: the policy follows its next cd from there.
      await checkPolicy(policy, command, (await workspace.place(ctx)).cwd);
      const shell = await shells.shellFor(ctx);
      const limit = timeout ?? timeoutMs;
      const run = await shell.run(command, { timeoutMs: limit, maxChars: maxOutputChars, cancel: ctx.cancel });
      if (run.stopped === "cancelled") throw cancelledError(ctx.cancel?.reason);
      if (run.stopped === "processes") {
        const said = run.output === "" ? "It printed nothing." : `What it printed before:\n${withCut(run, maxOutputChars)}`;
        throw new GaggleError(
          "LIMIT_REACHED",
          `this session's commands ran ${run.processes} processes at once, past the cap of ${maxProcesses} ([virtual.workspace] max_processes): the command was killed with every process this session's commands started; the shell keeps its working directory, variables and functions. ${said}`,
          { hint: "run fewer processes at once, or raise [virtual.workspace] max_processes" },
        );
      }
      if (run.stopped === "timeout") {
        const said = run.output === "" ? "It printed nothing." : `What it printed before:\n${withCut(run, maxOutputChars)}`;
        throw new GaggleError(
          "TIMEOUT",
          `the command ran past its timeout of ${limit} ms and was killed with the processes it started; the shell keeps its working directory, variables and functions. ${said}`,
          { hint: `give a longer timeout (at most ${maxTimeoutMs}), or run long work in the background with the process child (gg_process_run)` },
        );
      }
      return answer(run, maxOutputChars);
    },
  });
}

function answer(run: CommandRun, maxChars: number): CallToolResult {
  const output = run.output === "" && run.dropped === 0 ? "(no output)" : withCut(run, maxChars);
  const end = output.endsWith("\n") ? "" : "\n";
  return textResult(`${output}${end}[exit status ${run.status ?? "unknown"}]`);
}

function withCut(run: CommandRun, maxChars: number): string {
  if (run.dropped === 0) return run.output;
  const end = run.output.endsWith("\n") ? "" : "\n";
  return (
    `${run.output}${end}[output cut: ${run.dropped} more characters were dropped after the first ${maxChars} ` +
    "([virtual.workspace] max_output_chars); send long output to a file and read it with View or GrepTool]"
  );
}
