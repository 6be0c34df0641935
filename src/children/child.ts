// The one interface the router holds for every child, real MCP server or built-in virtual child.
import type {
  CallToolResult,
  Prompt,
  Progress,
  Resource,
  ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";

export type ChildKind = "stdio" | "http" | "sse" | "virtual";

export type ChildState = "not_started" | "starting" | "running" | "stopping" | "stopped" | "failed";

export interface ChildSchema {
  tools: Tool[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  prompts: Prompt[];
}

/** What a call carries from the client that made it. */
export interface CallContext {
  signal?: AbortSignal;
  onprogress?: (progress: Progress) => void;
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
  schema(): Promise<ChildSchema>;
  /** Arguments have been checked against the tool's input schema by the router before this is called. */
  callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult>;
  /** Starts the session now rather than on first use. */
  start(): Promise<void>;
  /** Ends the session and frees its process; the next use starts it again. Resolves with the uptime it had. */
  close(): Promise<{ uptimeMs: number | null }>;
}
