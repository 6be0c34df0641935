// Owns the answer to an agent's `session/request_permission`: a form elicitation to the person at the client whose
// prompt the turn runs, its options as choices; where no person can be asked, the agent's `permission` policy.
import type * as acp from "@agentclientprotocol/sdk";
import type { PermissionPolicy } from "../../config/agents.js";
import { WireError, errorMessage } from "../../shared/errors.js";
import { isObject } from "../../shared/json.js";
import { oneLine } from "../goose/format.js";

/** Asks the client something (an elicitation); rejects with a WireError when it cannot be asked at all. */
export type Ask = (
  request: { method: string; params: Record<string, unknown> },
  signal: AbortSignal,
  timeoutMs: number,
) => Promise<Record<string, unknown>>;

/** Tool kinds `allow_reads` lets through: they look, and change nothing. */
const READ_KINDS = new Set<string>(["read", "search", "think"]);

export interface PermissionQuestion {
  request: acp.RequestPermissionRequest;
  /** Who to ask; undefined when no client can be (the prompt came from none). */
  ask: Ask | undefined;
  policy: PermissionPolicy;
  timeoutMs: number;
  /** Aborted when the agent withdraws the request or the turn ends. */
  signal: AbortSignal;
  /** What the agent and session are, for the person reading the question. */
  who: string;
  /** Writes one line of the decision into the transcript. */
  note(text: string): void;
  /** The paths the tool call names (its locations and diffs) that lie outside the session's roots, and those roots. */
  outside: { paths: string[]; roots: string };
}

/**
 * The files a tool call names: its locations and the paths of its diffs. An agent that acts through its own tools
 * (not through gaggle's fs/ and terminal/ methods) is held to the session's roots by these alone.
 */
export function toolCallPaths(toolCall: acp.ToolCallUpdate): string[] {
  const paths = (toolCall.locations ?? []).map((location) => location.path);
  for (const item of toolCall.content ?? []) if (item.type === "diff") paths.push(item.path);
  return [...new Set(paths)];
}

export async function answerPermission(question: PermissionQuestion): Promise<acp.RequestPermissionResponse> {
  const { request, ask, note } = question;
  const title = oneLine(request.toolCall.title ?? request.toolCall.toolCallId, 200);
  note(`${title} asks permission: ${request.options.map((option) => `${option.name} (${option.kind})`).join(", ")}`);
  const { outside } = question;
  if (outside.paths.length > 0) {
    // Nobody is asked: the session's roots bound what its agent may touch, whatever a person or the policy would say.
    note(`it reaches ${outside.paths.join(", ")}, outside the session's roots (${outside.roots}): rejected`);
    return reject(request);
  }
  if (ask) {
    const asked = await elicit(question, ask, title);
    if (asked !== "cannot ask") return asked;
  }
  return byPolicy(question);
}

async function elicit(question: PermissionQuestion, ask: Ask, title: string): Promise<acp.RequestPermissionResponse | "cannot ask"> {
  const { request, timeoutMs, note } = question;
  const timeout = AbortSignal.timeout(timeoutMs);
  const params = {
    mode: "form",
    message: `${question.who} asks permission: ${title}`,
    requestedSchema: {
      type: "object",
      properties: {
        decision: {
          type: "string",
          title: "Decision",
          oneOf: request.options.map((option) => ({ const: option.optionId, title: option.name })),
        },
      },
      required: ["decision"],
    },
  };
  let answer: Record<string, unknown>;
  try {
    answer = await ask({ method: "elicitation/create", params }, AbortSignal.any([question.signal, timeout]), timeoutMs);
  } catch (error) {
    if (error instanceof WireError && !timeout.aborted) return "cannot ask";
    if (question.signal.aborted) {
      note("withdrawn: the turn was cancelled, or the agent took the request back");
      return { outcome: { outcome: "cancelled" } };
    }
    if (timeout.aborted) {
      note(`unanswered after ${Math.round(timeoutMs / 1000)} s: rejected`);
      return reject(request);
    }
    note(`the client could not be asked (${errorMessage(error)}): rejected`);
    return reject(request);
  }
  const decision = isObject(answer.content) ? answer.content.decision : undefined;
  const chosen = request.options.find((option) => option.optionId === decision);
  if (answer.action === "accept" && chosen) {
    note(`the person chose ${chosen.name} (${chosen.kind})`);
    return { outcome: { outcome: "selected", optionId: chosen.optionId } };
  }
  const said = answer.action === "accept" ? "answered with no option" : answer.action === "decline" ? "declined" : "cancelled the question";
  note(`the person ${said}: rejected`);
  return reject(request);
}

function byPolicy(question: PermissionQuestion): acp.RequestPermissionResponse {
  const { request, policy, note } = question;
  const kind = request.toolCall.kind ?? "other";
  const allowed = policy === "allow" || (policy === "allow_reads" && READ_KINDS.has(kind));
  const why =
    policy === "ask"
      ? 'no person could be asked and permission = "ask": rejected'
      : `permission = "${policy}" ${allowed ? "allows" : "rejects"} this ${kind} tool call`;
  if (!allowed) {
    note(why);
    return reject(request);
  }
  const option = request.options.find((o) => o.kind === "allow_once") ?? request.options.find((o) => o.kind === "allow_always");
  if (!option) {
    note(`${why}, but the agent offered no allow option: cancelled`);
    return { outcome: { outcome: "cancelled" } };
  }
  note(`${why}: ${option.name}`);
  return { outcome: { outcome: "selected", optionId: option.optionId } };
}

/** The agent's own reject option when it offers one (the request is answered), else the request is cancelled. */
function reject(request: acp.RequestPermissionRequest): acp.RequestPermissionResponse {
  const option = request.options.find((o) => o.kind === "reject_once") ?? request.options.find((o) => o.kind === "reject_always");
  return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : { outcome: { outcome: "cancelled" } };
}
