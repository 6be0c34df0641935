// Owns gg_team_message: who may send, to whom ("broadcast" is everyone but the sender), and the receipt.
import { GaggleError } from "../../shared/errors.js";
import type { Courier } from "./courier.js";
import { checkImages, type ImagePlace } from "./images.js";
import { isParticipant, requireParticipant, type TeamCaller } from "./principal.js";
import { BROADCAST, LEAD, type TeamRecord } from "./records.js";
import type { TeamRegistry } from "./registry.js";
import type { MessageArgs } from "./tool-args.js";
import { checkTeamId } from "./validate.js";

export async function sendMessage(
  registry: TeamRegistry,
  courier: Courier,
  sender: TeamCaller,
  place: ImagePlace,
  args: MessageArgs,
): Promise<Record<string, unknown>> {
  addressed(registry, sender, args);
  const images = await checkImages(args.image_paths ?? [], place);
  // Asked again after the images were read: the team may have changed meanwhile.
  const { team, broadcast, recipients } = addressed(registry, sender, args);
  const { message, deliveries } = courier.post(team, {
    kind: "message",
    from: sender.agentId,
    to: broadcast ? BROADCAST : recipients[0]!,
    scope: broadcast ? "broadcast" : "direct",
    text: args.message,
    imagePaths: images,
    recipients,
  });
  // The receipt leaves once the message is on disk.
  await registry.saved(team);
  return {
    message_id: message.message_id,
    delivery_ids: deliveries.map((delivery) => delivery.delivery_id),
    recipient_count: deliveries.length,
    scope: message.scope,
    image_count: images.length,
    ...(images.length > 0 && { image_paths: images }),
    deliveries: deliveries.map((delivery) => ({ agent_id: delivery.to, delivery_id: delivery.delivery_id, state: delivery.state })),
  };
}

/** The sender's team and whom the message goes to; throws when the sender may not send it. */
function addressed(registry: TeamRegistry, { agentId: caller, owner }: TeamCaller, args: MessageArgs) {
  const team = registry.get(checkTeamId(args.team_id), owner);
  requireParticipant(team, caller);
  const broadcast = args.recipient_agent_id.trim().toLowerCase() === BROADCAST;
  const recipients = broadcast
    ? participants(team).filter((agentId) => agentId !== caller)
    : [recipient(team, caller, args.recipient_agent_id.trim())];
  if (recipients.length === 0) {
    throw new GaggleError("INVALID_ARGS", `there is no one else in team ${team.team_id} to broadcast to`, { hint: "gg_team_manage adds members" });
  }
  return { team, broadcast, recipients };
}

/** The lead first, then members not removed, in the order they were added. */
function participants(team: TeamRecord): string[] {
  return [team.lead_agent_id, ...team.members.filter((member) => !member.removed_at).map((member) => member.agent_id)];
}

/** "lead" names the team's lead whoever it is. */
function recipient(team: TeamRecord, caller: string, given: string): string {
  const agentId = given === LEAD ? team.lead_agent_id : given;
  if (agentId === caller) throw new GaggleError("INVALID_ARGS", `${caller} cannot send a message to itself`);
  if (isParticipant(team, agentId)) return agentId;
  const removed = team.members.find((member) => member.agent_id === agentId);
  if (removed) throw new GaggleError("INVALID_ARGS", `${agentId} was removed from team ${team.team_id} at ${removed.removed_at}`);
  throw new GaggleError("NOT_FOUND", `no member "${given}" in team ${team.team_id}`, {
    hint: `recipients: ${
      participants(team)
        .filter((id) => id !== caller)
        .join(", ") || "none"
    }, or "broadcast"`,
  });
}
