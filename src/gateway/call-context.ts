// What a child call carries from the client request that caused it: cancellation, progress, _meta, the caller.
import type { ProgressNotification } from "@modelcontextprotocol/sdk/types.js";
import { Cancellation } from "../children/calls/cancellation.js";
import type { Caller, CallContext } from "../children/child.js";
import type { CallExtra, ClientSession } from "./client-session.js";

/**
 * A 2025 session's request: its cancellation and its related messages come from the SDK's handler extra (or the lane's);
 * when the session ends under it, it is cancelled with the reason the session ended.
 */
export function callContext(session: ClientSession, meta: Record<string, unknown> | undefined, extra: CallExtra): CallContext {
  const cancel = extra.cancel ?? new Cancellation(extra.signal, session.ended);
  const caller = session.callerFor(extra);
  const relaysResult = extra.relaysResult === true;
  // A request without _meta (most) has no progress token: the way back for progress is made only for one with it.
  if (meta === undefined) return { cancel, caller, relaysResult };
  const ctx = contextOf(cancel, caller, meta, (notification) => {
    void extra.sendNotification(notification).catch(() => {});
  });
  ctx.relaysResult = relaysResult;
  return ctx;
}

/**
 * The context of a request in either era. The request's `_meta` reaches the child, except its progress token:
 * the child gets the gateway's own, and its progress is relayed to `sendProgress` under the client's token.
 */
export function contextOf(
  cancel: Cancellation,
  caller: Caller,
  meta: Record<string, unknown> | undefined,
  sendProgress: (notification: ProgressNotification) => void,
): CallContext {
  const ctx: CallContext = { cancel, caller };
  if (meta === undefined) return ctx;
  const { progressToken, ...rest } = meta;
  if (Object.keys(rest).length > 0) ctx.meta = rest;
  if (typeof progressToken === "string" || typeof progressToken === "number") {
    ctx.onprogress = (progress) => sendProgress({ method: "notifications/progress", params: { ...progress, progressToken } });
  }
  return ctx;
}
