// The one interface the router holds for every child, real MCP server or built-in virtual child.
import type {
  CallToolResult,
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  LoggingLevel,
  LoggingMessageNotification,
  Prompt,
  Progress,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Cancellation } from "./cancellation.js";

export type ChildKind = "stdio" | "http" | "sse" | "virtual";

export type ChildState = "not_started" | "starting" | "running" | "stopping" | "stopped" | "failed";

export interface ChildSchema {
  tools: Tool[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  prompts: Prompt[];
}

/**
 * The client a call came from, as one call sees it: where a child's requests and notifications made while
 * serving that call must go, and no other client.
 */
/** A team member an agent gaggle started speaks as; set only on sessions opened with that member's secret. */
export interface MemberIdentity {
  teamId: string;
  agentId: string;
}

export interface Caller {
  /** The client's session id ("stdio" for the stdio client). */
  readonly sessionId: string;
  /** Set when the client is an agent gaggle started for a team, connected with its own secret. */
  readonly identity?: MemberIdentity | undefined;
  /** Forwards a request the child made (sampling, elicitation, roots); rejects as the spec says when the client lacks the capability. */
  forward(request: { method: string; params?: Record<string, unknown> | undefined }, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** Delivers a child's log message, if the client's log level lets it through. */
  log(params: LogMessage): void;
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
}

/** What a child reports that is not the answer to a call; the gateway fans it out to its clients. */
export interface ChildEvents {
  listChanged(child: string, kind: "tools" | "resources" | "prompts"): void;
  resourceUpdated(child: string, uri: string): void;
  /** A log message; `callers` are the clients with calls in flight at that child (empty when there are none). */
  log(child: string, params: LogMessage, callers: Caller[]): void;
  /**
   * Tells one client something after its call has returned (a background job ended): a log message,
   * filtered by that client's level, and/or that a resource changed. A client that has gone is skipped.
   */
  notify(sessionId: string, note: { log?: LogMessage; resourceUpdated?: string }): void;
}

export interface ChildStatus {
  state: ChildState;
  kind: ChildKind;
  pid: number | null;
  startedAt: Date | null;
  restarts: number;
  lastError: string | null;
  stderrTail: string[];
  callsServed: number;
  queue: { running: number; waiting: number };
  /** Known once the child's tool list has been fetched in this session; null before. */
  toolCount: number | null;
}

export interface Child {
  readonly name: string;
  readonly kind: ChildKind;
  readonly description: string | undefined;
  status(): ChildStatus;
  /** Starts the child if needed; the tools it exposes (after its allow/deny filter). */
  tools(): Promise<Tool[]>;
  /**
   * An exposed tool by name when the child's tool list is already in hand, without starting or fetching
   * anything; undefined otherwise (then `tools()` decides). The router asks this first on every call.
   */
  knownTool?(name: string): Tool | undefined;
  schema(): Promise<ChildSchema>;
  /** Arguments have been checked against the tool's input schema by the router before this is called. */
  callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult>;
  readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult>;
  getPrompt(name: string, args: Record<string, string> | undefined, ctx: CallContext): Promise<GetPromptResult>;
  complete(params: CompleteRequest["params"], ctx: CallContext): Promise<CompleteResult>;
  /** Subscriptions and the log level are kept across restarts of the child's session. */
  subscribe(uri: string): Promise<void>;
  unsubscribe(uri: string): Promise<void>;
  setLoggingLevel(level: LoggingLevel): Promise<void>;
  /** A client session went away: requests from the child must no longer be routed to it. */
  forgetCaller?(sessionId: string): void;
  /** A client's roots changed: a running child is told, and asks again if it cares. */
  rootsChanged?(): void;
  /** Starts the session now rather than on first use. */
  start(): Promise<void>;
  /** Ends the session and frees its process; the next use starts it again. Resolves with the uptime it had. */
  close(): Promise<{ uptimeMs: number | null }>;
}
