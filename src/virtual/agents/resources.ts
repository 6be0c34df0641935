// Owns the agents:// resources: one session's transcript as text, read only by the principal that owns the session.
import type { ReadResourceResult, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../../children/child.js";
import type { AgentSession } from "./session.js";
import { statusView } from "./views.js";

export const AGENTS_RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: "agents://sessions/{session_id}/transcript",
    name: "agent session transcript",
    description: "One agent session's status and whole transcript, updated as it grows (subscribe to follow it)",
    mimeType: "text/plain",
  },
];

export function transcriptUri(sessionId: string): string {
  return `agents://sessions/${sessionId}/transcript`;
}

interface SessionFinder {
  find(sessionId: string, ctx: CallContext): AgentSession;
}

/** undefined when the URI is not an agents:// one, or names no session of the caller's. */
export function readAgentsResource(owner: SessionFinder, uri: string, ctx: CallContext): ReadResourceResult | undefined {
  const match = /^agents:\/\/sessions\/([^/]+)\/transcript$/.exec(uri);
  if (!match) return undefined;
  let session: AgentSession;
  try {
    session = owner.find(decodeURIComponent(match[1]!), ctx);
  } catch {
    return undefined;
  }
  const page = session.transcript.page(0, Number.MAX_SAFE_INTEGER);
  return { contents: [{ uri, mimeType: "text/plain", text: [statusView(session), "", ...page.lines].join("\n") }] };
}
