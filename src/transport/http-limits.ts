// What one token's clients may hold of the HTTP listener at once: connections and sessions, each counted per
// principal and in all, so that one client (or a flood of half-open connections) cannot take what the others need.
import type { Socket } from "node:net";

export interface ListenerLimits {
  maxConnectionsPerPrincipal: number;
  maxSessions: number;
  maxSessionsPerPrincipal: number;
}

/** A refusal to answer with 503, saying which limit and what to do. */
export interface LimitRefusal {
  message: string;
}

export class ListenerUsage {
  /** The principal each connection first authenticated as; a connection counts for it until it closes. */
  private readonly owners = new WeakMap<Socket, string>();
  private readonly connections = new Map<string, number>();
  private readonly sessions = new Map<string, number>();
  private sessionTotal = 0;

  constructor(private readonly limits: ListenerLimits) {}

  /**
   * Counts `socket` for `principal` on its first authenticated request, or refuses it when that principal already
   * holds its share. A connection reused by another token keeps counting for the first.
   */
  admitConnection(socket: Socket, principal: string): LimitRefusal | undefined {
    if (this.owners.has(socket)) return undefined;
    const held = this.connections.get(principal) ?? 0;
    if (held >= this.limits.maxConnectionsPerPrincipal) {
      return {
        message: `too many connections for token "${principal}": it holds ${held} (gateway.max_connections_per_principal); reuse connections (keep-alive) or close some, or raise the limit`,
      };
    }
    this.owners.set(socket, principal);
    this.connections.set(principal, held + 1);
    socket.once("close", () => this.release(this.connections, principal));
    return undefined;
  }

  /** Counts a new session for `principal`, or refuses it past either session limit; `release` undoes it when the session ends. */
  admitSession(principal: string): { release: () => void } | LimitRefusal {
    const held = this.sessions.get(principal) ?? 0;
    if (held >= this.limits.maxSessionsPerPrincipal) {
      return {
        message: `too many sessions for token "${principal}": it holds ${held} (gateway.max_sessions_per_principal); end sessions it no longer uses (DELETE /mcp with their Mcp-Session-Id), or raise the limit`,
      };
    }
    if (this.sessionTotal >= this.limits.maxSessions) {
      return {
        message: `too many sessions: ${this.sessionTotal} are open (gateway.max_sessions); retry once some end, or raise the limit`,
      };
    }
    this.sessions.set(principal, held + 1);
    this.sessionTotal++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.sessionTotal--;
        this.release(this.sessions, principal);
      },
    };
  }

  private release(counts: Map<string, number>, principal: string): void {
    const left = (counts.get(principal) ?? 1) - 1;
    if (left > 0) counts.set(principal, left);
    else counts.delete(principal);
  }
}
