// What a transport gives gaggle for one modern request: where its notifications go, and its cancellation.
import type { JSONRPCNotification } from "@modelcontextprotocol/sdk/types.js";
import type { Cancellation } from "../../children/calls/cancellation.js";
import type { ClientPrincipal } from "../../children/child.js";

/** Who sent the request is the principal the transport read from it (its token, or a member's path). */
export interface ModernExchange extends ClientPrincipal {
  /** Sends a notification related to this request: on its response stream (HTTP), or on stdout (stdio). */
  notify(notification: JSONRPCNotification): void;
  /** Aborted when the client closes the response stream (HTTP) or sends notifications/cancelled (stdio). */
  readonly cancel: Cancellation;
}
