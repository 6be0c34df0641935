// One connected client: its MCP server object, its log level, its subscriptions, and how calls reach back to it.
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ErrorCode,
  type ClientCapabilities,
  type LoggingLevel,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { Caller, ClientPrincipal, LogMessage, MemberIdentity, UrlOpener } from "../children/child.js";
import { Cancellation } from "../children/calls/cancellation.js";
import { AnyResultSchema } from "../children/wire/caller-tracker.js";
import { WireError } from "../shared/errors.js";
import type { PeerInfo } from "../shared/observer.js";
import type { CheckedServer } from "./checked-server.js";
import { CHANNEL_METHOD } from "./capabilities.js";

/** RFC 5424 order, as MCP uses it: a client at level L receives L and everything more severe. */
const SEVERITY: LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** The capability a client must have declared before a child's request of this method may reach it. */
const NEEDED = new Map<string, keyof ClientCapabilities>([
  ["sampling/createMessage", "sampling"],
  ["elicitation/create", "elicitation"],
  ["roots/list", "roots"],
]);

/**
 * What a call's handler uses of its request: cancellation, and messages sent as related to the call. The
 * tools/call lane gives a `cancel` that makes its `signal` only on demand; other requests have the SDK's signal.
 * Call `sendNotification` and `sendRequest` as methods: the lane's are methods of a class, not bound closures.
 */
export type CallExtra = Pick<RequestHandlerExtra<ServerRequest, ServerNotification>, "signal" | "sendNotification" | "sendRequest"> & {
  cancel?: Cancellation;
  /** The call's result is written to the client as it is (see CallContext.relaysResult). */
  relaysResult?: boolean;
};

export class ClientSession {
  /** Set by the client with logging/setLevel; until then every message is delivered. */
  logLevel: LoggingLevel | undefined;
  readonly subscriptions = new Set<string>();
  /** When the client connected. */
  readonly since = new Date();
  /**
   * It made a request other than initialize: a client at work, not one that only checked the server (a health
   * check that initializes and leaves without ending its session). Only these count as connected.
   */
  active = false;
  /**
   * Aborted with the reason the client's connection closed, before its SDK Server hears of the close: the reason the
   * requests that server answers are cancelled with (see callContext).
   */
  readonly ended = new Cancellation();

  constructor(
    readonly id: string,
    readonly server: CheckedServer,
    /** Fixed when the session opens: a session cannot become anyone else. */
    readonly who: ClientPrincipal,
  ) {}

  get principal(): string {
    return this.who.principal;
  }

  get identity(): MemberIdentity | undefined {
    return this.who.identity;
  }

  allows(level: LoggingLevel): boolean {
    return this.logLevel === undefined || levelAllows(this.logLevel, level);
  }

  /**
   * Whether the client has initialized its session. Until then it is told nothing: on stdio the client may be
   * speaking the 2026-07-28 era, where only its listen streams carry notifications.
   */
  get initialized(): boolean {
    return this.server.getClientVersion() !== undefined;
  }

  /** A channel event (see CHANNEL_METHOD), once the client has initialized. */
  channel(content: string, meta: Record<string, string>): void {
    if (this.initialized) void this.server.notification({ method: CHANNEL_METHOD, params: { content, meta } }).catch(() => {});
  }

  resourceUpdated(uri: string): void {
    if (this.initialized) void this.server.sendResourceUpdated({ uri }).catch(() => {});
  }

  /** A log message not tied to a call (no call in flight at the child that logged it). */
  log(params: LogMessage): void {
    if (this.initialized && this.allows(params.level)) void this.server.notification({ method: "notifications/message", params }).catch(() => {});
  }

  /**
   * Asks the client something outside any call (an agent's permission request while no call of the client is in
   * flight): over Streamable HTTP it travels on the session's own notification stream. Refused as `forward` refuses
   * when the client lacks the capability.
   */
  ask(
    request: { method: string; params?: Record<string, unknown> | undefined },
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<Record<string, unknown>> {
    refuseWithout(this, request.method);
    return this.server.request(request as ServerRequest, AnyResultSchema, { signal, timeout: timeoutMs });
  }

  /**
   * The caller as one call sees it. Requests and notifications are sent as related to that call, so over
   * Streamable HTTP they travel on the call's own stream and reach this client and no other.
   */
  callerFor(extra: CallExtra): Caller {
    return new CallerOfCall(this, extra);
  }
}

/** A class rather than an object of closures: one is made for every call. */
class CallerOfCall implements Caller {
  constructor(
    private readonly session: ClientSession,
    private readonly extra: CallExtra,
  ) {}

  get sessionId(): string {
    return this.session.id;
  }

  get identity(): MemberIdentity | undefined {
    return this.session.identity;
  }

  get principal(): string {
    return this.session.who.principal;
  }

  async forward(request: { method: string; params?: Record<string, unknown> | undefined }, signal: AbortSignal): Promise<Record<string, unknown>> {
    refuseWithout(this.session, request.method);
    return this.extra.sendRequest(request as ServerRequest, AnyResultSchema, { signal });
  }

  log(params: LogMessage): void {
    if (this.session.allows(params.level)) void this.extra.sendNotification({ method: "notifications/message", params }).catch(() => {});
  }

  get client(): PeerInfo | undefined {
    const info = this.session.server.getClientVersion();
    return info && { name: info.name, version: info.version };
  }

  get protocol(): string | undefined {
    return this.session.server.protocolVersion;
  }

  get urls(): UrlOpener | undefined {
    if (this.session.server.getClientCapabilities()?.elicitation?.url === undefined) return undefined;
    return {
      open: async (request, signal) => {
        const answer = await this.extra.sendRequest({ method: "elicitation/create", params: { mode: "url", ...request } }, AnyResultSchema, {
          signal,
          // The person may take a while to decide; the sign-in itself has its own limit.
          timeout: 5 * 60_000,
        });
        return answer.action === "accept";
      },
      completed: (elicitationId) =>
        void this.extra.sendNotification({ method: "notifications/elicitation/complete", params: { elicitationId } }).catch(() => {}),
    };
  }
}

/** A request of `method` may reach the client only if it declared the capability the method needs. */
function refuseWithout(session: ClientSession, method: string): void {
  const capability = NEEDED.get(method);
  if (capability && !session.server.getClientCapabilities()?.[capability]) {
    throw new WireError(ErrorCode.MethodNotFound, `${method} is not available: the client did not declare the ${capability} capability`);
  }
}

/** Whether a client at level `wanted` receives a message at `level`. */
export function levelAllows(wanted: LoggingLevel, level: LoggingLevel): boolean {
  return SEVERITY.indexOf(level) >= SEVERITY.indexOf(wanted);
}

/** The most verbose of several levels: what the children must send so that every client gets what it asked for. */
export function mostVerbose(levels: LoggingLevel[]): LoggingLevel | undefined {
  return levels.reduce<LoggingLevel | undefined>(
    (most, level) => (most === undefined || SEVERITY.indexOf(level) < SEVERITY.indexOf(most) ? level : most),
    undefined,
  );
}
