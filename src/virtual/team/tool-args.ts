// The team tools' arguments: the zod schemas their input schemas come from, and the types their handlers read.
import { z } from "zod";

const text = (description: string) => z.string().min(1).describe(description);
const paths = (description: string) => z.array(z.string().min(1)).describe(description);
const TEAM_ID = text("The team's id (letters, digits, . _ -). gg_team_manage with a new id creates the team, its caller the lead.");

/** gg_team_manage's arguments; a description names the configured model presets. */
export function manageInput(presetText: string, agentText: string) {
  return z.strictObject({
    team_id: TEAM_ID,
    agent: text(`Add: the member is this ACP agent (an [agents.NAME]) instead of a gosling; ${agentText}`).optional(),
    title: text('Add: the member\'s role, shown in its messages (default: the worktree name, else "member")').optional(),
    prompt: z.string().describe("Add: onboarding instructions, delivered as the member's first message").optional(),
    image_paths: paths("Add: images (PNG, JPEG, GIF, WebP, BMP) attached to the onboarding message, in order").optional(),
    model_preset: text(`Add: a [virtual.team.model_presets] name, passed to Goose as --provider and --model; ${presetText}`).optional(),
    worktree_name: z
      .string()
      .describe(
        "Add: a worktree (and branch) name; lower-cased, must match [a-z0-9][a-z0-9-_]*. The member runs in it: " +
          "<worktrees_dir>/NAME on branch NAME, or for a named principal (HTTP token) <worktrees_dir>/@<principal>/NAME on branch @<principal>/NAME.",
      )
      .optional(),
    use_existing_worktree: z
      .boolean()
      .describe("Add: reuse the existing worktree worktree_name instead of creating it (no init script runs)")
      .optional(),
    unsubscribe_from_compaction_notifications: z
      .boolean()
      .describe("Add: true stops notices to you when Goose compacts this member's context")
      .optional(),
    remove_agent_ids: z.array(text("An agent id")).describe('Remove mode: the members to remove, e.g. ["agent-1a2b3c4d"]').optional(),
  });
}

export const messageInput = z.strictObject({
  team_id: TEAM_ID,
  recipient_agent_id: text('A member\'s agent id, "lead", or "broadcast"'),
  message: text("The message"),
  image_paths: paths("Images (PNG, JPEG, GIF, WebP, BMP) sent along, in order; relative paths start from your working directory").optional(),
});

export const statusInput = z.strictObject({ team_id: TEAM_ID });

export type ManageArgs = z.input<ReturnType<typeof manageInput>>;
export type MessageArgs = z.input<typeof messageInput>;
