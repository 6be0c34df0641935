// The Child contract: the one interface the router holds for every child, real MCP server or built-in, and what a call carries to it.
import type {
  CallToolResult,
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  LoggingMessageNotification,
  Prompt,
  Progress,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallHold } from "./calls/call-hold.js";
import type { Cancellation } from "./calls/cancellation.js";
import { GaggleError } from "../shared/errors.js";
import type { PeerInfo, ServerOperation } from "../shared/observer.js";

export type ChildKind = "stdio" | "http" | "sse" | "virtual";

export type ChildState = "not_started" | "starting" | "running" | "stopping" | "stopped" | "failed";

export interface ChildSchema {
  tools: Tool[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  prompts: Prompt[];
}

export type ListKind = keyof ChildSchema;

/** The list_changed notification each list belongs to: resource templates change with resources. */
export const CHANGED_WITH = { tools: "tools", resources: "resources", resourceTemplates: "resources", prompts: "prompts" } as const;

/** A team member an agent gaggle started speaks as; set only on sessions opened with that member's secret. */
export interface MemberIdentity {
  teamId: string;
  agentId: string;
}

/**
 * Who a client is, fixed when its session opens; what it starts (processes) belongs to its principal, not to
 * one session, so the same person reaches it again from a new session.
 */
export interface ClientPrincipal {
  /** Set when the client is an agent gaggle started for a team, connected with its own secret. */
  readonly identity?: MemberIdentity | undefined;
  /** LOCAL_PRINCIPAL, the name of the bearer token the client sent over HTTP, or memberPrincipal of its identity. */
  readonly principal: string;
}

/** The client on stdio, a one-shot command, or any client of an HTTP listener that asks for no token. */
export const LOCAL_PRINCIPAL = "local";

export function memberPrincipal(identity: MemberIdentity): string {
  return `member:${identity.teamId}/${identity.agentId}`;
}

/**
 * The client a call came from, as one call sees it: where a child's requests and notifications made while
 * serving that call must go, and no other client.
 */
export interface Caller extends ClientPrincipal {
  /** The client's session id ("stdio" for the stdio client). */
  readonly sessionId: string;
  /**
   * True while the client cannot be asked anything: a 2026-07-28 call parked between rounds, waiting for its
   * client's answers. A child's request then goes to another call in flight, if there is one.
   */
  readonly paused?: boolean;
  /**
   * True when the client takes input_required results itself (a 2026-07-28 client in a call that may ask): a
   * 2026-07-28 child's questions go to it as they are. Otherwise gaggle asks them with `forward` and retries.
   */
  readonly relaysInput?: boolean;
  /** A 2026-07-28 client's envelope (its version, capabilities, info and log level): what a 2026-07-28 child hears of it. */
  readonly envelope?: Record<string, unknown> | undefined;
  /** Forwards a request the child made (sampling, elicitation, roots); rejects as the spec says when the client lacks the capability. */
  forward(request: { method: string; params?: Record<string, unknown> | undefined }, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** Delivers a child's log message, if the client's log level lets it through. */
  log(params: LogMessage): void;
  /** Set when the client can show a person a URL (it declared URL-mode elicitation). */
  readonly urls?: UrlOpener | undefined;
  /** The client's name and version, and the MCP version it speaks, as far as they are known. */
  readonly client?: PeerInfo | undefined;
  readonly protocol?: string | undefined;
}

/** URL-mode elicitation, as a call uses it to send a person to a page outside the client (a sign-in). */
export interface UrlOpener {
  /** Asks the client to show the person `url`; true when they agreed to open it. */
  open(request: { message: string; url: string; elicitationId: string }, signal: AbortSignal): Promise<boolean>;
  /** Tells the client that what the page was for is done (notifications/elicitation/complete). */
  completed(elicitationId: string): void;
}

export type LogMessage = LoggingMessageNotification["params"];

/** What a call carries from the client that made it. */
export interface CallContext {
  /** Cancelled when the client cancels the call or goes away. */
  cancel?: Cancellation;
  onprogress?: (progress: Progress) => void;
  caller?: Caller;
  /** The client's request `_meta`, passed on to the child (the progress token is the gateway's own). */
  meta?: Record<string, unknown>;
  /**
   * Set for a call that may pause to wait on its client (a 2026-07-28 call awaiting input): each admission the
   * call passes (its place in its child's line) registers here how to give it back while the call
   * waits, so that a client that never returns holds up nobody.
   */
  holds?: CallHold[];
  /**
   * A 2026-07-28 client's retry of a call a child asked input for: the answers, and the child's own
   * requestState, passed on to the child with the call.
   */
  resume?: { inputResponses?: unknown; requestState?: string };
  /** Set when something observes gaggle: the client's request this call serves, timed and traced. */
  operation?: ServerOperation;
  /**
   * Set when gaggle itself ends with the call (a one-shot `gaggle call`): work meant to go on in the
   * background after the answer (a process, a gosling) would be killed at once, so it is refused.
   */
  endsWithCall?: boolean;
  /**
   * Set when whatever awaits the call writes its result to the client as it is, reading in it at most whether it is
   * an error (a 2025 session's tools/call, observed or not): a child's plain answer may then come as its line alone,
   * checked but not parsed (see ChildWire.receiveLine). Whatever reads more of the result calls with resultRead(ctx).
   */
  relaysResult?: boolean;
}

/**
 * `ctx` with another operation or `_meta`, for the calls made under it. Copied member by member: a literal that
 * spreads a context of whatever shape defines each member after the spread the slow way, on every call.
 */
export function contextWith(ctx: CallContext, operation: ServerOperation | undefined, meta: Record<string, unknown> | undefined): CallContext {
  // Every member named: a member added to CallContext and not copied here is a type error.
  const copy: { [K in keyof Required<CallContext>]: CallContext[K] } = {
    cancel: ctx.cancel,
    onprogress: ctx.onprogress,
    caller: ctx.caller,
    meta,
    holds: ctx.holds,
    resume: ctx.resume,
    operation,
    endsWithCall: ctx.endsWithCall,
    relaysResult: ctx.relaysResult,
  };
  return copy;
}

/** `ctx` for a call whose result is read on its way back to the client (more than isError): the child's answer comes parsed. */
export function resultRead(ctx: CallContext): CallContext {
  if (!ctx.relaysResult) return ctx;
  const copy = contextWith(ctx, ctx.operation, ctx.meta);
  copy.relaysResult = false;
  return copy;
}

/** The refusal of background work in a call gaggle ends with (CallContext.endsWithCall). */
export function backgroundRefusal(what: string): GaggleError {
  return new GaggleError("INVALID_ARGS", `${what} would be killed as soon as this command exits: gaggle call ends when the call does`, {
    hint: "run it through a running gaggle (the MCP server your client starts, or gaggle --http), or run the work in your shell directly",
  });
}

/**
 * What the router hands a child with a tools/call, once the call is through the child's line: where it waited,
 * and for a call with a time limit, how much of it the wait used up.
 */
export interface Turn {
  /** The line the call came through, for errors that say what it held. */
  readonly queue: QueueDepth;
  /** How long a call with a time limit waited for its turn (its limit counts from when it arrived); undefined for a call without one. */
  readonly queuedMs: number | undefined;
}

export interface QueueDepth {
  /** Calls at the child now. */
  readonly running: number;
  /** Calls waiting for a slot. */
  readonly waiting: number;
}

/** Lines a child wrote to stdout that are not JSON-RPC: how many, and the last few with why each was not. */
export interface StdoutNoiseView {
  lines: number;
  recent: { reason: string; line: string }[];
}

/** What a child says of itself; the router adds what it counts of the child's calls. */
export interface ChildStatus {
  state: ChildState;
  kind: ChildKind;
  pid: number | null;
  startedAt: Date | null;
  restarts: number;
  lastError: string | null;
  /** The last start failed because a person has to sign in (a remote child behind OAuth). */
  needsAuth: boolean;
  stderrTail: string[];
  /** What a stdio child wrote to stdout that is not JSON-RPC (ignored), over all its sessions. */
  stdoutNoise: StdoutNoiseView;
  /** Known once the child's tool list has been fetched in this session; null before. */
  toolCount: number | null;
  /** The protocol revision the child speaks, once a session found it ("2026-07-28", "2025-11-25"); null before. */
  protocol: string | null;
}

/** Work a client started that goes on after its call: a background process, a gosling, an agent, a team. */
export interface BackgroundWork {
  kind: "process" | "gosling" | "agent" | "team";
  id: string;
  /** The principal that started it: only its own see it on the status page. Null: every operator's (a team). */
  owner: string | null;
  state: string;
  /** What it is: a command, a gosling's name, a team's lead. */
  title: string;
  startedAt: Date | null;
  /** When it ended (a background process that exited or was stopped); null while it goes on. */
  endedAt: Date | null;
}

/**
 * Every child, a real MCP server or a built-in one, is this and only this; nobody asks which kind it is.
 * Calls reach `callTool` through the router alone, which finds the tool, checks the arguments against its
 * input schema and queues the call within the child's concurrency, the same way for every child.
 * Children that follow what clients change (their log level, a client gone, its roots) subscribe to it on
 * the Switchboard they are built with.
 */
export interface Child {
  readonly name: string;
  readonly description: string | undefined;
  /** Never starts the child. */
  status(): ChildStatus;
  /** Starts the child if needed; the tools it exposes (after its allow/deny filter). */
  tools(): Promise<Tool[]>;
  /**
   * An exposed tool by name when the child's tool list is already in hand, without starting or fetching
   * anything; undefined otherwise (then `tools()` decides). The router asks this first on every call.
   */
  knownTool(name: string): Tool | undefined;
  /**
   * The config key that leaves out tool `name`, one the child lists, of what it offers (`mcp_servers.NAME.tools.deny`);
   * undefined when the child lists no such tool, or none leaves it out. Never starts the child.
   */
  hiddenBy?(name: string): string | undefined;
  /**
   * The lists known without starting or fetching anything: a running session's, else those the catalog kept
   * from the child's last run. A list not known is absent. Tools as `tools()` gives them.
   */
  known(): Partial<ChildSchema>;
  /** Starts the child if needed; its tools (as `tools()` gives them), resources, resource templates and prompts. */
  schema(): Promise<ChildSchema>;
  /** Only the router calls this, with arguments that fit the tool's input schema, once the call has its `turn`. */
  callTool(name: string, args: Record<string, unknown>, ctx: CallContext, turn?: Turn): Promise<CallToolResult>;
  readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult>;
  getPrompt(name: string, args: Record<string, string> | undefined, ctx: CallContext): Promise<GetPromptResult>;
  complete(params: CompleteRequest["params"], ctx: CallContext): Promise<CompleteResult>;
  /** Updates of a subscribed resource are reported through ChildEvents.resourceUpdated, across restarts of the child. */
  subscribe(uri: string): Promise<void>;
  unsubscribe(uri: string): Promise<void>;
  /**
   * Refuses, as a read of `uri` would, a client that may not follow it (work another principal started). Without
   * it, whoever may list a URI may follow it: a configured child's resources are the same for every client.
   */
  checkFollower?(uri: string, ctx: CallContext): Promise<void>;
  /** What its clients started that still runs or was kept after it ended (the status page lists it); never starts the child. */
  background(): BackgroundWork[];
  /**
   * Ends the session and stops everything the child started; the next use starts it again. Resolves with the
   * uptime it had. With `principal` (close_child_session where clients are told apart by their tokens), a built-in
   * child ends only what that principal started, or refuses when what it holds is shared by every client; a
   * configured server's one session is everyone's and ends whole. `why` is what a call still in flight is told of
   * its session's end.
   */
  close(principal?: string, why?: CloseReason): Promise<{ uptimeMs: number | null }>;
}

/**
 * Why gaggle ends a child's session: the child left the config, an edit of the config remade it, a client closed it
 * (close_child_session), or gaggle is shutting down.
 */
export type CloseReason = "removed" | "edited" | "asked" | "shutdown";
