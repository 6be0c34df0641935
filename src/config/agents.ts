// `[agents.NAME]`: the coding agents gaggle drives over the Agent Client Protocol, each a command that speaks ACP on
// its stdio. The `agents` built-in child (virtual/agents/) serves them; `[virtual.agents]` switches it.
import { z } from "zod";
import { isObject } from "../shared/json.js";
import { configCommand, configPath, type PathOptions } from "./paths.js";
import { directoryPaths, expected, oneOf, settingsTable } from "./zod-kit.js";

/** How a permission request is answered when no person can be asked (the client cannot take an elicitation). */
export const PERMISSION_POLICIES = ["ask", "allow_reads", "allow", "deny"] as const;
export type PermissionPolicy = (typeof PERMISSION_POLICIES)[number];

/** Agent names are what a caller types as `agent`: kept plain. */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

const count = (what: string) => z.int(expected(what)).min(1, { error: `expected ${what}` });
const positive = (what: string) => z.number(expected(what)).positive({ error: `expected ${what}` });

const agentTable = settingsTable({
  command: z.string(expected("a command")).min(1, { error: "expected a command" }),
  args: z.array(z.string(expected("a string")), expected("an array of strings")).default(() => []),
  env: z.record(z.string(), z.string(expected("a string")), expected("a table of strings")).default(() => ({})),
  /** Where the agent process runs and sessions start; relative to the config file's folder, which it defaults to. */
  cwd: z.string(expected("a directory path")).min(1).optional(),
  /** The folders its sessions may reach (files and terminals), narrowed by the client's own roots; defaults to [cwd]. */
  roots: directoryPaths().min(1, "expected at least one directory").optional(),
  /** Live (not released) sessions of this agent at once, over every principal together. */
  max_active: count("an integer >= 1").default(4),
  /** Live sessions of this agent one principal may hold at once; unset, a principal may hold all of max_active. */
  max_active_per_principal: count("an integer >= 1").optional(),
  /** Sessions kept, released ones included (for their transcripts); the oldest released of whoever keeps the most go first. */
  max_sessions: count("an integer >= 1").default(20),
  /** A session without a turn this long is released; 0 = never. The agent's process ends with its last session. */
  idle_release_minutes: z.number(expected("a number of minutes >= 0 (0 = never)")).min(0, { error: "expected a number of minutes >= 0" }).default(30),
  /** Transcript kept per session, in bytes; the oldest lines go first. */
  max_output_bytes: count("an integer >= 1").default(1024 * 1024),
  /** A turn running this long is cancelled (session/cancel). */
  prompt_timeout_minutes: positive("a number of minutes > 0").default(30),
  /** Who answers the agent's permission requests when the client cannot be asked: "ask" refuses them. */
  permission: oneOf(PERMISSION_POLICIES).default("ask"),
  /** How long a person gets to answer a permission request before it is rejected. */
  permission_timeout_seconds: positive("a number of seconds > 0").default(300),
});

export type AgentTable = z.output<typeof agentTable>;

/** One agent as gaggle reads it: its name, every path absolute. */
export interface AgentConfig extends Omit<AgentTable, "cwd" | "roots"> {
  name: string;
  cwd: string;
  roots: string[];
}

/** The `[agents]` table of the file at `file`: one entry per agent, in file order. */
export function agentsSchema(file: PathOptions) {
  return z
    .record(z.string(), agentTable, expected("a table of agents ([agents.NAME])"))
    .superRefine(
      (table: unknown, ctx) => {
        for (const name of isObject(table) ? Object.keys(table) : []) {
          if (AGENT_NAME_PATTERN.test(name)) continue;
          const message = `invalid agent name ${JSON.stringify(name)}: expected letters, digits, "_" or "-", starting with a letter or digit`;
          ctx.addIssue({ code: "custom", path: [name], message, input: name, continue: true });
        }
      },
      { when: (payload) => isObject(payload.value) },
    )
    .transform((table) =>
      Object.entries(table).map(([name, agent]): AgentConfig => {
        const cwd = configPath(agent.cwd ?? ".", file);
        return {
          ...agent,
          name,
          command: configCommand(agent.command, file),
          cwd,
          roots: (agent.roots ?? [cwd]).map((root) => configPath(root, file)),
        };
      }),
    );
}
