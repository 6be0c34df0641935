// What a transport gives gaggle for one modern request: where its notifications go, and its cancellation.
import type { JSONRPCNotification } from "@modelcontextprotocol/sdk/types.js";
import type { Cancellation } from "../../children/cancellation.js";
import type { MemberIdentity } from "../../children/child.js";

export interface ModernExchange {
  /** Sends a notification related to this request: on its response stream (HTTP), or on stdout (stdio). */
  notify(notification: JSONRPCNotification): void;
  /** Aborted when the client closes the response stream (HTTP) or sends notifications/cancelled (stdio). */
  readonly cancel: Cancellation;
  /** The team member the request speaks as, when it came on a member's path. */
  readonly identity?: MemberIdentity | undefined;
}
