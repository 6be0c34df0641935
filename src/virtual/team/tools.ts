// Owns the team child's tools: gg_team_manage, gg_team_message and gg_team_status, and what each answers (arguments in tool-args.ts).
import type { z } from "zod";
import type { CallContext } from "../../children/child.js";
import { jsonResult } from "../../shared/tool-results.js";
import { defineTool, type ToolSpec, type VirtualTool } from "../virtual-child.js";
import { addMember, imagePlaceOf, removeMembers, type ManageDeps } from "./manage.js";
import { manageInput, messageInput, statusInput } from "./tool-args.js";
import { sendMessage } from "./messaging.js";
import { requireParticipant, teamCaller, type TeamCaller } from "./principal.js";
import { LEAD } from "./records.js";
import { statusView } from "./status-view.js";
import { checkTeamId, parseManage } from "./validate.js";

export interface ToolDeps extends ManageDeps {
  /** Whether resources/list may name each team's inbox (see Visibility.listsWork), asked at each list. */
  listsWork: () => boolean;
}

/** A team tool's spec: every one names its team, and its handler learns who calls and answers with JSON. */
type TeamToolSpec<Input extends z.ZodObject<{ team_id: z.ZodString }>> = Omit<ToolSpec<Input>, "run"> & {
  run(args: z.input<Input>, caller: TeamCaller, ctx: CallContext): Promise<object> | object;
};

export function teamTools(deps: ToolDeps): VirtualTool[] {
  const presets = Object.keys(deps.settings.modelPresets);
  const presetText = presets.length > 0 ? `one of: ${presets.join(", ")}` : "none are configured ([virtual.team.model_presets.NAME])";
  const agents = deps.roster.agentNames();
  const agentText = agents.length > 0 ? `one of: ${agents.join(", ")}` : "none are configured ([agents.NAME])";
  /**
   * Every call: the caller is known from its session, the lead's session is remembered, its members held since a close of
   * the team child may start again, and waiting deliveries are tried.
   */
  const teamTool = <Input extends z.ZodObject<{ team_id: z.ZodString }>>(spec: TeamToolSpec<Input>): VirtualTool =>
    defineTool({
      ...spec,
      run: async (args, ctx) => {
        const caller = teamCaller(ctx, deps.registry);
        // A call made after a close of the team child starts the caller's members again as needed.
        deps.courier.reopen(deps.registry.ownedBy(caller.owner).flatMap((team) => team.members.map((member) => member.agent_id)));
        const noteLead = () => {
          const team = deps.registry.find(caller.owner, args.team_id);
          if (team) deps.inbox.noteCaller(team, caller.agentId, ctx);
        };
        noteLead();
        try {
          return jsonResult(await spec.run(args, caller, ctx));
        } finally {
          noteLead();
          deps.courier.pumpAll();
        }
      },
    });
  return [
    teamTool({
      name: "gg_team_manage",
      description:
        "Manage team membership. Omit remove_agent_ids to add one member: a Goose agent (gosling), or with `agent` a coding agent over ACP, " +
        "that joins with gaggle as its MCP server, speaks as itself, and starts on an onboarding turn carrying `prompt`; optionally in its own git worktree " +
        `(worktree_name: a new branch NAME and checkout <worktrees_dir>/NAME, for a named principal (HTTP token) @<principal>/NAME in ` +
        `<worktrees_dir>/@<principal>/NAME, then ./.agents/gg/worktree-init.sh if present; use_existing_worktree reuses one). model_preset: ${presetText}. ` +
        "The first add creates the team and makes its caller the lead. Give remove_agent_ids to remove members: their goslings or agent sessions are " +
        "released (transcripts kept) and their worktrees left in place. Only the lead manages a team unless [virtual.team] allow_member_manage = true.",
      input: manageInput(presetText, agentText),
      annotations: { destructiveHint: true, openWorldHint: true },
      run: (args, caller, ctx) => {
        const request = parseManage(args);
        return request.mode === "remove" ? removeMembers(deps, caller, request) : addMember(deps, caller, request, ctx);
      },
    }),
    teamTool({
      name: "gg_team_message",
      description:
        'Send a team message as yourself. recipient_agent_id is a member\'s agent id, "lead", or "broadcast" (everyone in the team but you). ' +
        'A member gets it as a new turn ("Message from <sender> (<title>): ..."), queued while it is busy; the lead gets it in its inbox and a ' +
        "notification. Returns message_id, one delivery id per recipient, recipient_count, scope and image_count. Markdown is welcome.",
      input: messageInput,
      annotations: { openWorldHint: false },
      run: (args, caller) => sendMessage(deps.registry, deps.courier, caller, imagePlaceOf(caller.agentId, deps), args),
    }),
    teamTool({
      name: "gg_team_status",
      description:
        "The team: its lead, each member's state (starting, working, idle, exited, removed), last activity, last message, worktree, who added it " +
        "and token use; recent deliveries with their states (pending, deferred, delivered, failed); and your unread messages, which this marks read.",
      input: statusInput,
      annotations: { readOnlyHint: false, openWorldHint: false },
      run: async (args, caller) => {
        const team = deps.registry.get(checkTeamId(args.team_id), caller.owner);
        requireParticipant(team, caller.agentId);
        const unread = caller.agentId === LEAD ? deps.inbox.takeUnread(team) : [];
        if (unread.length > 0) await deps.registry.save(team);
        return statusView(team, caller.agentId, deps.roster, unread);
      },
    }),
  ];
}
