// The client of one modern request, as the child serving it sees it: notifications on the round's own stream, and
// the child's questions asked through an input_required result.
import { randomUUID } from "node:crypto";
import type { JSONRPCNotification, LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { LOCAL_PRINCIPAL, type Caller, type LogMessage, type MemberIdentity, type UrlOpener } from "../../children/child.js";
import { WireError } from "../../shared/errors.js";
import type { PeerInfo } from "../../shared/observer.js";
import { levelAllows } from "../client-session.js";
import type { ModernExchange } from "./exchange.js";
import type { InputRequest } from "./input-capability.js";
import type { Envelope } from "./envelope.js";
import { META, MODERN_ERRORS, MODERN_VERSION } from "../../shared/modern-protocol.js";
import type { ResumableCall } from "./resumable-call.js";

export class ModernCaller implements Caller {
  /** Each modern request is a client of its own: the era has no sessions to share. */
  readonly sessionId = `request:${randomUUID()}`;
  readonly identity: MemberIdentity | undefined;
  readonly principal: string;
  readonly envelope: Record<string, unknown>;
  readonly client: PeerInfo | undefined;
  readonly protocol: string;
  private readonly logLevel: LoggingLevel | undefined;

  /**
   * @param exchange the round in progress; a resumed call moves to its retry's. Between rounds nothing is sent.
   * @param call where the child's questions go; without one (a request that cannot ask) they are refused.
   */
  constructor(
    private exchange: ModernExchange | undefined,
    envelope: Envelope,
    private readonly call?: ResumableCall,
  ) {
    this.identity = exchange?.identity;
    this.principal = exchange?.principal ?? LOCAL_PRINCIPAL;
    this.logLevel = envelope.logLevel;
    this.client = envelope.clientInfo && { name: envelope.clientInfo.name, version: envelope.clientInfo.version };
    this.protocol = envelope.protocolVersion;
    this.envelope = {
      [META.protocolVersion]: envelope.protocolVersion,
      [META.clientCapabilities]: envelope.clientCapabilities,
      ...(envelope.clientInfo && { [META.clientInfo]: envelope.clientInfo }),
      ...(envelope.logLevel && { [META.logLevel]: envelope.logLevel }),
    };
  }

  /** A call that can end in input_required hands a 2026-07-28 child's questions to the client as they are. */
  get relaysInput(): boolean {
    return this.call !== undefined;
  }

  get paused(): boolean {
    return this.call !== undefined && this.exchange === undefined;
  }

  /** The round now in progress, or none. */
  attach(exchange: ModernExchange | undefined): void {
    this.exchange = exchange;
  }

  /**
   * A call that may ask, from a client that declared URL-mode elicitation: the URL goes out in an
   * input_required result, and the client's retry says whether the person agreed to open it.
   */
  get urls(): UrlOpener | undefined {
    const declared = this.envelope[META.clientCapabilities] as { elicitation?: { url?: unknown } } | undefined;
    if (!this.call || declared?.elicitation?.url === undefined) return undefined;
    const call = this.call;
    return {
      open: async (request, signal) =>
        (await call.ask({ method: "elicitation/create", params: { mode: "url", ...request } }, signal)).action === "accept",
      completed: (elicitationId) => this.notify({ jsonrpc: "2.0", method: "notifications/elicitation/complete", params: { elicitationId } }),
    };
  }

  forward(request: InputRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    if (this.call) return this.call.ask(request, signal);
    return Promise.reject(
      new WireError(
        MODERN_ERRORS.missingCapability,
        `${request.method} cannot reach the client that made this request: it speaks MCP ${MODERN_VERSION}, where a server asks for input only in the result of a tool call, prompt or resource read`,
      ),
    );
  }

  notify(notification: JSONRPCNotification): void {
    this.exchange?.notify(notification);
  }

  /** Only when the request named a log level, and then at that level or more severe. */
  log(params: LogMessage): void {
    if (this.logLevel !== undefined && levelAllows(this.logLevel, params.level)) {
      this.notify({ jsonrpc: "2.0", method: "notifications/message", params });
    }
  }
}
