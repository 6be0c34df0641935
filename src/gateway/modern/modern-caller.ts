// The client of one modern request, as the child serving it sees it: logs on the request's own stream, no requests back.
import { randomUUID } from "node:crypto";
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { Caller, LogMessage, MemberIdentity } from "../../children/child.js";
import { WireError } from "../../shared/errors.js";
import { levelAllows } from "../client-session.js";
import type { ModernExchange } from "./exchange.js";
import { MODERN_ERRORS, MODERN_VERSION } from "./protocol.js";

export class ModernCaller implements Caller {
  /** Each modern request is a client of its own: the era has no sessions to share. */
  readonly sessionId = `request:${randomUUID()}`;

  constructor(
    private readonly exchange: ModernExchange,
    private readonly logLevel: LoggingLevel | undefined,
  ) {}

  get identity(): MemberIdentity | undefined {
    return this.exchange.identity;
  }

  /** A 2026-07-28 client takes no requests from a server; a child's sampling, elicitation or roots request is refused. */
  forward(request: { method: string }): Promise<Record<string, unknown>> {
    return Promise.reject(
      new WireError(
        MODERN_ERRORS.missingCapability,
        `${request.method} cannot reach the client that made this call: it speaks MCP ${MODERN_VERSION}, where a server asks for input only through an input_required result`,
      ),
    );
  }

  /** Only when the request named a log level, and then at that level or more severe. */
  log(params: LogMessage): void {
    if (this.logLevel !== undefined && levelAllows(this.logLevel, params.level)) {
      this.exchange.notify({ jsonrpc: "2.0", method: "notifications/message", params });
    }
  }
}
