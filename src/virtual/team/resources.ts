// Owns the team:// resources: each team's inbox, read as the caller (the lead's unread messages, or a member's deliveries).
import type { ReadResourceResult, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../../children/child.js";
import { inboxUri, type LeadInbox } from "./inbox.js";
import { requireParticipant, teamCaller } from "./principal.js";
import { LEAD } from "./records.js";
import type { TeamRegistry } from "./registry.js";

/**
 * Each team id's inbox, for a list the same for every client: only when every client may see every team (see
 * Visibility.listsWork). A URI names each reader's own team of that id, so an id several principals use is listed once.
 */
export function teamResources(registry: TeamRegistry, listsWork: boolean): Resource[] {
  if (!listsWork) return [];
  const ids = [...new Set(registry.all().map((team) => team.team_id))];
  return ids.map((teamId) => ({
    uri: inboxUri(teamId),
    name: `team ${teamId} inbox`,
    description: `Messages to you in your team ${teamId}; the lead's stay unread until gg_team_status returns them`,
    mimeType: "application/json",
  }));
}

export const TEAM_RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: "team://{team_id}/inbox",
    name: "team inbox",
    description: "Messages to you in a team, oldest first, with read and delivery states",
    mimeType: "application/json",
  },
];

/** Reading never marks anything read: clients may read resources on their own. undefined: not a team:// URI. */
export function readTeamResource(uri: string, ctx: CallContext, registry: TeamRegistry, inbox: LeadInbox): ReadResourceResult | undefined {
  const match = /^team:\/\/([^/]+)\/inbox$/.exec(uri);
  if (!match) return undefined;
  // The caller's own team of this id: the same URI names each principal's own team.
  const who = teamCaller(ctx, registry);
  const team = registry.find(who.owner, decodeURIComponent(match[1]!));
  if (!team) return undefined;
  const caller = who.agentId;
  requireParticipant(team, caller);
  inbox.noteCaller(team, caller, ctx);
  const messages = inbox.entries(team, caller);
  const body = {
    team_id: team.team_id,
    agent_id: caller,
    unread_count: messages.filter((entry) => caller === LEAD && entry.read_at === null).length,
    messages,
  };
  return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(body, null, 2) }] };
}
