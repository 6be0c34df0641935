// Every connected client, and the fan-out of what children report: list changes, resource updates, logs.
import { ErrorCode, type LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { Caller, Child, LogMessage, MemberIdentity } from "../children/child.js";
import type { ChildEvents, Switchboard } from "../children/switchboard.js";
import { WireError } from "../shared/errors.js";
import { logger } from "../shared/log.js";
import type { Observer } from "../shared/observer.js";
import { mostVerbose, type ClientSession } from "./client-session.js";
import type { ProxyCatalog } from "./proxy/proxy-catalog.js";

type ListChangeKind = "tools" | "resources" | "prompts";
const LIST_CHANGE_KINDS: readonly ListChangeKind[] = ["tools", "resources", "prompts"];

/** How long list changes are gathered before clients hear of them: a cold start changes lists in bursts. */
export const LIST_CHANGED_BURST_MS = 250;

type ResourceOwner = Pick<Child, "subscribe" | "unsubscribe">;

export interface ConnectedClient {
  id: string;
  identity: MemberIdentity | undefined;
  principal: string;
  /** Its name and version, once it initialized. */
  client: { name: string; version: string } | undefined;
  since: Date;
}

/** Who may hold resource subscriptions: a legacy client's session, or a modern client's listen stream. */
export interface Subscriber {
  readonly id: string;
  /** Whose subscriptions these are: an update of another principal's work reaches only those who see it. */
  readonly principal: string;
  readonly subscriptions: Set<string>;
  resourceUpdated(uri: string): void;
}

/** A modern client's subscriptions/listen stream: it hears the list changes it asked for. */
export interface ListChangeListener extends Subscriber {
  wants(kind: "tools" | "resources" | "prompts"): boolean;
  listChanged(kind: "tools" | "resources" | "prompts"): void;
}

export class SessionHub implements ChildEvents {
  private readonly sessions = new Map<string, ClientSession>();
  private readonly listeners = new Map<string, ListChangeListener>();
  /**
   * Which sessions subscribed to each resource URI, and the child that owns it; a child is subscribed while
   * anyone is. The owner is kept so that unsubscribing never has to look for it again, which could start
   * children that are not running.
   */
  private readonly subscribers = new Map<string, { owner: ResourceOwner; sessions: Set<string> }>();
  private readonly logger = logger({ subsystem: "sessions" });
  /** The list kinds changed since the last notices, and the timer that sends them. */
  private readonly pendingKinds = new Set<ListChangeKind>();
  private burst: NodeJS.Timeout | undefined;
  /** The level every child was last given, when all of them took it. */
  private appliedLogLevel: LoggingLevel | undefined;

  /** Hears what children report on `switchboard`, and announces on it what clients change. */
  constructor(
    private readonly switchboard: Switchboard,
    private readonly catalog: ProxyCatalog,
    /** Told how long each session lasted, when something observes gaggle. */
    private readonly observer?: Observer,
  ) {
    switchboard.listen(this);
    switchboard.askThrough(this);
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The connected clients (see ClientSession.active): who each is (its principal, the member it speaks as), what it said it is, and since when. */
  clients(): ConnectedClient[] {
    return [...this.sessions.values()]
      .filter((session) => session.active)
      .map((session) => ({
        id: session.id,
        identity: session.identity,
        principal: session.who.principal,
        client: session.server.getClientVersion(),
        since: session.since,
      }));
  }

  add(session: ClientSession): void {
    this.sessions.set(session.id, session);
  }

  /** A client went away: its subscriptions and its log level are released, and children stop routing to it. */
  async remove(session: ClientSession): Promise<void> {
    if (!this.sessions.delete(session.id)) return;
    this.observer?.sessionEnded({ durationMs: Date.now() - session.since.getTime(), transport: session.id === "stdio" ? "pipe" : "tcp" });
    for (const uri of [...session.subscriptions]) await this.unsubscribe(session, uri).catch(() => {});
    this.switchboard.callerGone(session.id);
    await this.applyLogLevel();
  }

  /** Until the returned function is called, `listener` hears list changes and updates of the resources it subscribes. */
  listen(listener: ListChangeListener): () => Promise<void> {
    this.listeners.set(listener.id, listener);
    return async () => {
      if (!this.listeners.delete(listener.id)) return;
      for (const uri of [...listener.subscriptions]) await this.unsubscribe(listener, uri).catch(() => {});
    };
  }

  /** The child is subscribed for the first subscriber; if that fails, nobody is recorded as subscribed. */
  async subscribe(session: Subscriber, uri: string, owner: ResourceOwner): Promise<void> {
    if (!this.subscribers.has(uri)) await owner.subscribe(uri);
    const entry = this.subscribers.get(uri) ?? { owner, sessions: new Set<string>() };
    entry.sessions.add(session.id);
    this.subscribers.set(uri, entry);
    session.subscriptions.add(uri);
  }

  async unsubscribe(session: Subscriber, uri: string): Promise<void> {
    session.subscriptions.delete(uri);
    const entry = this.subscribers.get(uri);
    if (!entry?.sessions.delete(session.id) || entry.sessions.size > 0) return;
    this.subscribers.delete(uri);
    await entry.owner.unsubscribe(uri);
  }

  async setLogLevel(session: ClientSession, level: LoggingLevel): Promise<void> {
    session.logLevel = level;
    await this.applyLogLevel();
  }

  /** Whether a client is not reading what it was sent (see ClientOutbox): the children serving it hold their output meanwhile. */
  clientBacklog(sessionId: string, backlogged: boolean): void {
    this.switchboard.clientBacklog(sessionId, backlogged);
  }

  /** A client's roots changed: the children are told, and ask again if they care. */
  rootsChanged(): void {
    this.switchboard.rootsChanged();
  }

  /**
   * The catalog forgets the list at once; clients hear of it at the end of the burst (LIST_CHANGED_BURST_MS after
   * the first change), once per kind however many children changed meanwhile: each notice makes a client fetch the
   * whole list again.
   */
  listChanged(child: string, kind: ListChangeKind): void {
    this.catalog.invalidate(kind);
    if (this.catalog.lists(child, kind)) this.announce(kind);
  }

  /** Every list may have changed (the children changed): one notice of each kind. */
  everyListChanged(): void {
    for (const kind of LIST_CHANGE_KINDS) {
      this.catalog.invalidate(kind);
      this.announce(kind);
    }
  }

  /** Sends the notices still waiting for their burst to end, now; a closing gaggle calls it last. */
  flushListChanges(): void {
    clearTimeout(this.burst);
    this.burst = undefined;
    const kinds = [...this.pendingKinds];
    this.pendingKinds.clear();
    for (const kind of kinds) {
      for (const session of this.sessions.values()) {
        if (!session.initialized) continue;
        const server = session.server;
        const send =
          kind === "tools" ? server.sendToolListChanged() : kind === "prompts" ? server.sendPromptListChanged() : server.sendResourceListChanged();
        void send.catch(() => {});
      }
      for (const listener of this.listeners.values()) if (listener.wants(kind)) listener.listChanged(kind);
    }
  }

  private announce(kind: ListChangeKind): void {
    this.pendingKinds.add(kind);
    // Unref: a notice waiting out its burst must not keep a stopping gaggle alive.
    this.burst ??= setTimeout(() => this.flushListChanges(), LIST_CHANGED_BURST_MS).unref();
  }

  resourceUpdated(_child: string, uri: string, heardBy?: (principal: string) => boolean): void {
    for (const id of this.subscribers.get(uri)?.sessions ?? []) {
      const subscriber = this.sessions.get(id) ?? this.listeners.get(id);
      if (subscriber && (heardBy === undefined || heardBy(subscriber.principal))) subscriber.resourceUpdated(uri);
    }
  }

  /** Tagged with the child's name; sent to the clients whose calls are in flight, else to every client. */
  log(child: string, params: LogMessage, callers: Caller[]): void {
    const message = { ...params, logger: params.logger ? `${child}/${params.logger}` : child };
    if (callers.length > 0) for (const caller of callers) caller.log(message);
    else for (const session of this.sessions.values()) session.log(message);
  }

  /** Also a channel event, for a notice whose log data says what happened in its `message`; its other plain fields are the event's meta. */
  notify(sessionId: string, note: { log?: LogMessage; resourceUpdated?: string }): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    if (note.log) session.log(note.log);
    const event = note.log && channelEvent(note.log);
    if (event) session.channel(event.content, event.meta);
    // A subscriber of that URI hears of the update through resourceUpdated already.
    const uri = note.resourceUpdated;
    if (uri && !session.subscriptions.has(uri)) session.resourceUpdated(uri);
  }

  /** A request to one client session outside any call; refused with a WireError when that session is not here. */
  ask(
    sessionId: string,
    request: { method: string; params?: Record<string, unknown> },
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<Record<string, unknown>> {
    const session = this.sessions.get(sessionId);
    if (!session?.initialized) return Promise.reject(new WireError(ErrorCode.InvalidRequest, `the client session ${sessionId} is gone`));
    return session.ask(request, signal, timeoutMs);
  }

  /** Children are asked for the most verbose level any client wants; each client's own level filters what it gets. */
  private async applyLogLevel(): Promise<void> {
    const level = mostVerbose([...this.sessions.values()].flatMap((session) => (session.logLevel ? [session.logLevel] : [])));
    // The switchboard keeps the level for the children's later sessions, so an unchanged level is not sent again.
    if (!level || level === this.appliedLogLevel) return;
    this.appliedLogLevel = level;
    for (const { child, error } of await this.switchboard.setLogLevel(level)) {
      this.appliedLogLevel = undefined;
      this.logger.warn({ child, err: error }, "could not set log level");
    }
  }
}

/** A channel event's meta: identifier keys only, values as strings. */
const META_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

function channelEvent(log: LogMessage): { content: string; meta: Record<string, string> } | undefined {
  const data: unknown = log.data;
  if (typeof data !== "object" || data === null || typeof (data as { message?: unknown }).message !== "string") return undefined;
  const { message, ...fields } = data as { message: string } & Record<string, unknown>;
  const meta: Record<string, string> = { source: log.logger ?? "gaggle", level: log.level };
  for (const [key, value] of Object.entries(fields)) {
    if (META_KEY.test(key) && (typeof value === "string" || typeof value === "number" || typeof value === "boolean")) meta[key] = String(value);
  }
  return { content: message, meta };
}
