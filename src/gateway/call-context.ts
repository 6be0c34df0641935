// What a child call carries from the client request that caused it: cancellation, progress, _meta, the caller.
import { Cancellation } from "../children/cancellation.js";
import type { CallContext } from "../children/child.js";
import type { CallExtra, ClientSession } from "./client-session.js";

export function callContext(session: ClientSession, meta: Record<string, unknown> | undefined, extra: CallExtra): CallContext {
  const ctx: CallContext = { cancel: extra.cancel ?? new Cancellation(extra.signal), caller: session.callerFor(extra) };
  if (meta === undefined) return ctx;
  const { progressToken, ...rest } = meta;
  if (Object.keys(rest).length > 0) ctx.meta = rest;
  if (typeof progressToken === "string" || typeof progressToken === "number") {
    // The child gets the gateway's own token; its progress is relayed under the client's, on the call's stream.
    ctx.onprogress = (progress) =>
      void extra.sendNotification({ method: "notifications/progress", params: { ...progress, progressToken } }).catch(() => {});
  }
  return ctx;
}
