// One stdio connection, both protocol eras: 2026-07-28 requests are answered statelessly, the rest go to the session.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { ModernServer } from "../gateway/modern/modern-server.js";
import { claimsModernEra } from "../shared/modern-protocol.js";
import { RequestsInFlight } from "../gateway/requests-in-flight.js";
import { LOCAL_PRINCIPAL } from "../children/child.js";

/**
 * Wraps the client's transport. A request whose _meta claims the modern era (and server/discover, how a modern
 * client probes) is answered by the ModernServer, and notifications/cancelled for it aborts it; every other
 * message reaches `onmessage`, the 2025 session's server, as before. Nothing is pinned: a client that probes
 * with server/discover and falls back to initialize is served in the era it settles on.
 */
export class EraSplitTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly inFlight = new RequestsInFlight();

  constructor(
    private readonly inner: Transport,
    private readonly modern: ModernServer,
  ) {
    inner.onmessage = (message) => this.route(message);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      this.inFlight.abortAll(new Error("the client closed the connection"));
      this.onclose?.();
    };
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private route(message: JSONRPCMessage): void {
    if ("method" in message && "id" in message && (message.method === "server/discover" || claimsModernEra(message)))
      return void this.answer(message);
    if (this.inFlight.cancelledBy(message)) return;
    this.onmessage?.(message);
  }

  private async answer(request: JSONRPCRequest): Promise<void> {
    const cancel = this.inFlight.begin(request.id);
    const unsent = (error: unknown) => this.onerror?.(new Error(`could not send to the client: ${String(error)}`));
    try {
      const answer = await this.modern.handle(request, {
        cancel,
        principal: LOCAL_PRINCIPAL,
        notify: (notification) => void this.inner.send(notification).catch(unsent),
      });
      if (answer) await this.inner.send(answer).catch(unsent);
    } finally {
      this.inFlight.end(request.id, cancel);
    }
  }
}
