// The requests a connection is answering beside the SDK's Protocol, each with the cancellation its client can trigger.
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { Cancellation } from "../children/cancellation.js";

export class RequestsInFlight {
  private readonly byId = new Map<RequestId, Cancellation>();

  /** Records a request; its cancellation is aborted by the client's notifications/cancelled or by `abortAll`. */
  begin(id: RequestId): Cancellation {
    const cancel = new Cancellation();
    this.byId.set(id, cancel);
    return cancel;
  }

  /** The request is answered (a later request may reuse its id: only this one's entry is removed). */
  end(id: RequestId, cancel: Cancellation): void {
    if (this.byId.get(id) === cancel) this.byId.delete(id);
  }

  /** If `message` is notifications/cancelled for a request recorded here, aborts that request and says so. */
  cancelledBy(message: JSONRPCMessage): boolean {
    if (!("method" in message) || message.method !== "notifications/cancelled") return false;
    const params = message.params as { requestId?: RequestId; reason?: unknown } | undefined;
    const cancel = params?.requestId === undefined ? undefined : this.byId.get(params.requestId);
    if (!cancel) return false;
    this.byId.delete(params!.requestId!);
    cancel.abort(params!.reason);
    return true;
  }

  /** The connection ended: every request still in flight is cancelled. */
  abortAll(reason: unknown): void {
    for (const cancel of this.byId.values()) cancel.abort(reason);
    this.byId.clear();
  }
}
