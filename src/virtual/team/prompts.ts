// Owns the text members read: the onboarding turn a new member starts with, and each message's turn.
import { LEAD, SYSTEM, type MemberRecord, type MessageRecord, type TeamRecord, type TurnFailureRecord } from "./records.js";

/**
 * Every message turn starts "Message from <sender> (<title>): ", so an agent can tell a teammate's words
 * from its lead's, and ends with how to answer. No square brackets: they would read as directives to the
 * fake goose the tests use, and mean nothing to a real one.
 */
export function messageTurn(team: TeamRecord, message: MessageRecord, senderTitle: string): string {
  const images = message.image_paths.length > 0 ? `\n\nAttached images (read them from disk): ${message.image_paths.join(", ")}` : "";
  const reply =
    message.from === SYSTEM
      ? ""
      : `\n\n(Team ${team.team_id}, message ${message.message_id}. Reply with gg_team_message: team_id "${team.team_id}", recipient_agent_id "${message.from}".)`;
  return `Message from ${message.from} (${senderTitle}): ${message.text}${images}${reply}`;
}

export interface OnboardingFacts {
  team: TeamRecord;
  member: MemberRecord;
  adderTitle: string;
  /** The adder's onboarding message, if it gave a prompt or images. */
  message: MessageRecord | undefined;
}

/** The first turn of a member's gosling: who it is, how the team talks, then its onboarding message. */
export function onboardingTurn({ team, member, adderTitle, message }: OnboardingFacts): string {
  const lead = team.lead_agent_id === LEAD ? `the lead is "${LEAD}" (the person or agent who runs the team)` : `the lead is ${team.lead_agent_id}`;
  const place = member.worktree
    ? `You work in the git worktree ${member.worktree.path} on branch ${member.worktree.branch}; commit your work there.`
    : `You work in ${member.cwd}.`;
  const lines = [
    `You are ${member.agent_id} ("${member.title}"), a member of the agent team "${team.team_id}"; ${lead}. ${member.added_by} added you.`,
    place,
    `Team tools (from the gaggle extension): gg_team_message(team_id, recipient_agent_id, message) messages one member by agent id, the lead ("${team.lead_agent_id}"), or everyone else ("broadcast"); gg_team_status(team_id) shows the team. If they are not among your tools by name, call them through execute_child_tool with server_id "team".`,
    'Messages from the team arrive as new turns starting with "Message from". Report back to whoever asked when you finish.',
  ];
  const body = message ? messageTurn(team, message, adderTitle) : "Wait for messages from the team.";
  return `${lines.join("\n")}\n\n${body}`;
}

/** What a compaction notice says to the member that added the compacted one. */
export function compactionText(member: MemberRecord, notice: string): string {
  return `The context of ${member.agent_id} ("${member.title}") was compacted by Goose: ${notice}`;
}

/** What the lead reads when a member's turn on a message failed. */
export function turnFailedText(member: MemberRecord, message: MessageRecord, failure: TurnFailureRecord): string {
  const where = failure.agent_session_id
    ? `get_agent_output (agents) with session_id "${failure.agent_session_id}"`
    : `get_gosling_output (goose) with process_id "${failure.gosling_id}"`;
  return `The turn of ${member.agent_id} ("${member.title}") on ${message.kind === "onboarding" ? "its onboarding message" : "message"} ${message.message_id} from ${message.from} failed (${failure.state}): ${failure.problem}. ${where} shows its transcript.`;
}
