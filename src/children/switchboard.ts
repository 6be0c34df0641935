// Where the children and the clients' side meet: children report through it, and follow what clients change.
import { ErrorCode, type LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { WireError } from "../shared/errors.js";
import type { Caller, LogMessage } from "./child.js";
import type { CallerTracker } from "./wire/caller-tracker.js";

/** What a child reports that is not the answer to a call; the gateway fans it out to its clients. */
export interface ChildEvents {
  listChanged(child: string, kind: "tools" | "resources" | "prompts"): void;
  /**
   * A resource changed. `heardBy`, for a resource every client reads as its own view (a list of work), says which
   * principals' subscriptions hear of this change: those who see the work that changed; without it, every subscriber.
   */
  resourceUpdated(child: string, uri: string, heardBy?: (principal: string) => boolean): void;
  /** A log message; `callers` are the clients with calls in flight at that child (empty when there are none). */
  log(child: string, params: LogMessage, callers: Caller[]): void;
  /**
   * Tells one client something after its call has returned (a background job ended): a log message,
   * filtered by that client's level, and/or that a resource changed. A client that has gone is skipped. Log data
   * that is an object with a `message` sentence is also sent as a channel event (Claude Code puts it before the model).
   */
  notify(sessionId: string, note: { log?: LogMessage; resourceUpdated?: string }): void;
}

/** A request sent to one client session outside any call (an elicitation), by the gateway that holds the sessions. */
export interface SessionAsker {
  ask(
    sessionId: string,
    request: { method: string; params?: Record<string, unknown> },
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<Record<string, unknown>>;
}

/** A child's failure to take a new log level. */
export interface LevelRefusal {
  child: string;
  error: unknown;
}

/**
 * Made before the children and before the gateway, so that neither needs the other to exist first: children
 * are built with it and report through it (`ChildEvents`); the gateway's session hub listens to those reports
 * and announces through it what clients changed, which the children that care follow.
 */
export class Switchboard implements ChildEvents {
  private readonly listeners: ChildEvents[] = [];
  private readonly levelFollowers: Array<{ child: string; apply: (level: LoggingLevel) => Promise<void> }> = [];
  private readonly goneFollowers: Array<(sessionId: string) => void> = [];
  private readonly rootsFollowers: Array<() => void> = [];
  private readonly drainFollowers: Array<() => void> = [];
  /** Clients not reading what they were sent: an answer or request for each waits past its bound. */
  private readonly backlogged = new Set<string>();
  private level: LoggingLevel | undefined;
  private asker: SessionAsker | undefined;

  // ---- the clients' side

  /** Hears every report of every child from now on. */
  listen(listener: ChildEvents): void {
    this.listeners.push(listener);
  }

  /** Requests children make of one client session outside a call go through `asker`. */
  askThrough(asker: SessionAsker): void {
    this.asker = asker;
  }

  /** Asks every child that logs to log at `level`; resolves once each has taken it or refused. */
  async setLogLevel(level: LoggingLevel): Promise<LevelRefusal[]> {
    this.level = level;
    const followers = [...this.levelFollowers];
    const results = await Promise.allSettled(followers.map(({ apply }) => apply(level)));
    return results.flatMap((result, i) => (result.status === "rejected" ? [{ child: followers[i]!.child, error: result.reason }] : []));
  }

  /** A client session went away: nothing a child does from now on may be routed to it. */
  callerGone(sessionId: string): void {
    this.clientBacklog(sessionId, false);
    for (const follower of this.goneFollowers) follower(sessionId);
  }

  /**
   * A client is not reading: an answer or a request for it had to wait past gateway.max_client_queue_bytes;
   * `false` once it has read the queue back under that. Children serving it stop reading their output meanwhile.
   */
  clientBacklog(sessionId: string, backlogged: boolean): void {
    if (backlogged) this.backlogged.add(sessionId);
    else if (this.backlogged.delete(sessionId)) for (const follower of this.drainFollowers) follower();
  }

  /** A client's roots changed. */
  rootsChanged(): void {
    for (const follower of this.rootsFollowers) follower();
  }

  // ---- the children's side

  /** The level children are asked to log at: the most verbose any client asked for; undefined until one asks. */
  get logLevel(): LoggingLevel | undefined {
    return this.level;
  }

  onLogLevel(child: string, apply: (level: LoggingLevel) => Promise<void>): void {
    this.levelFollowers.push({ child, apply });
  }

  onCallerGone(follower: (sessionId: string) => void): void {
    this.goneFollowers.push(follower);
  }

  onRootsChanged(follower: () => void): void {
    this.rootsFollowers.push(follower);
  }

  /**
   * Asks the client session `sessionId` something outside any call (an elicitation); rejects with a WireError when
   * no such session is connected or it lacks the capability, and when the signal aborts or `timeoutMs` passes.
   */
  ask(
    sessionId: string,
    request: { method: string; params?: Record<string, unknown> },
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<Record<string, unknown>> {
    if (!this.asker) return Promise.reject(new WireError(ErrorCode.InvalidRequest, "no client sessions are served here"));
    return this.asker.ask(sessionId, request, signal, timeoutMs);
  }

  /** Whether a call in flight in `callers` is from a client that is not reading (see clientBacklog). */
  servesBacklogged(callers: CallerTracker): boolean {
    return this.backlogged.size > 0 && callers.serves((sessionId) => this.backlogged.has(sessionId));
  }

  /** Called each time a client that was not reading has read enough. */
  onClientDrained(follower: () => void): void {
    this.drainFollowers.push(follower);
  }

  listChanged(child: string, kind: "tools" | "resources" | "prompts"): void {
    for (const listener of this.listeners) listener.listChanged(child, kind);
  }

  resourceUpdated(child: string, uri: string, heardBy?: (principal: string) => boolean): void {
    for (const listener of this.listeners) listener.resourceUpdated(child, uri, heardBy);
  }

  log(child: string, params: LogMessage, callers: Caller[]): void {
    for (const listener of this.listeners) listener.log(child, params, callers);
  }

  notify(sessionId: string, note: { log?: LogMessage; resourceUpdated?: string }): void {
    for (const listener of this.listeners) listener.notify(sessionId, note);
  }
}
