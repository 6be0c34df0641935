// One forwarded request and its answer, in the era the child speaks: what a 2026-07-28 child hears of the client, and
// how its input_required reaches a client that cannot take it as it is.
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { WireError } from "../../shared/errors.js";
import { isObject } from "../../shared/json.js";
import { failureOutcome, resultOutcome, type ChildOperation } from "../../shared/observer.js";
import { contextWith, resultRead, type CallContext } from "../child.js";
import type { Session } from "../child-session.js";
import type { ForwardLimits } from "./forwarded-request.js";

/** Rounds of input a 2026-07-28 child may ask of a 2025 client in one call, as the SDK's own servers allow. */
const MAX_INPUT_ROUNDS = 8;

/** Names for errors: the child, and what the request was ("tool \"x\""); and how long it waited for its turn. */
export interface RequestLabel {
  child: string;
  what: string;
  /** For a tools/call with a time limit: how much of it the wait for its turn used up (see Turn). */
  queuedMs?: number | undefined;
}

/**
 * A 2025 child gets the request as it is; a client's retry carrying a child's requestState cannot be for it.
 * A 2026-07-28 child hears the client's envelope and its retry. When it asks for input and the client cannot
 * take the question as it is (a 2025 session), gaggle asks the client with server-to-client requests and
 * retries with the answers.
 */
export function exchangeInEra(
  session: Session,
  method: string,
  params: Record<string, unknown>,
  limits: ForwardLimits,
  ctx: CallContext,
  label: RequestLabel,
): Promise<Record<string, unknown>> {
  const operation = ctx.operation?.childRequest({
    child: label.child,
    method,
    name: typeof params.name === "string" ? params.name : undefined,
    uri: typeof params.uri === "string" ? params.uri : undefined,
    protocol: session.era.version,
    transport: session.remote ? "tcp" : "pipe",
    cancel: ctx.cancel,
  });
  return operation ? observedExchange(operation, session, method, params, limits, ctx, label) : exchange(session, method, params, limits, ctx, label);
}

/** The exchange as one observed request to the child: the child hears gaggle's trace context in the request's `_meta`. */
async function observedExchange(
  operation: ChildOperation,
  session: Session,
  method: string,
  params: Record<string, unknown>,
  limits: ForwardLimits,
  ctx: CallContext,
  label: RequestLabel,
): Promise<Record<string, unknown>> {
  const meta = operation.meta(ctx.meta);
  try {
    const result = await exchange(
      session,
      method,
      meta ? { ...params, _meta: meta } : params,
      limits,
      meta ? contextWith(ctx, ctx.operation, meta) : ctx,
      label,
    );
    operation.end(resultOutcome(result));
    return result;
  } catch (error) {
    operation.end(failureOutcome(error));
    throw error;
  }
}

/** A 2025 child's answer is the wire's own promise, handed on without a wrapper of its own to settle. */
function exchange(
  session: Session,
  method: string,
  params: Record<string, unknown>,
  limits: ForwardLimits,
  ctx: CallContext,
  label: RequestLabel,
): Promise<Record<string, unknown>> {
  if (session.era.modern) return modernExchange(session, method, params, limits, ctx, label);
  if (ctx.resume?.requestState !== undefined) {
    const refusal = new WireError(
      ErrorCode.InvalidParams,
      `requestState was not issued by gaggle, and ${label.child} speaks MCP ${session.era.version}, so it issued none; send the request again without it`,
      { reason: "invalid_request_state" },
    );
    return Promise.reject(refusal);
  }
  return session.wire.forward(method, params, limits, ctx, label.queuedMs);
}

async function modernExchange(
  session: Session,
  method: string,
  params: Record<string, unknown>,
  limits: ForwardLimits,
  ctx: CallContext,
  label: RequestLabel,
): Promise<Record<string, unknown>> {
  const meta = { ...ctx.meta, ...ctx.caller?.envelope };
  const sent = { ...params, ...(Object.keys(meta).length > 0 && { _meta: meta }), ...ctx.resume };
  // Each answer's resultType is read here.
  const hooks = resultRead(ctx);
  let result = await session.wire.forward(method, sent, limits, hooks, label.queuedMs);
  for (let round = 1; result.resultType === "input_required" && !ctx.caller?.relaysInput; round++) {
    if (round > MAX_INPUT_ROUNDS) {
      throw new WireError(ErrorCode.InternalError, `${label.what} asked for input ${MAX_INPUT_ROUNDS} times in a row; gaggle stopped asking`);
    }
    const inputResponses = await askCaller(result.inputRequests, ctx, label.what);
    const requestState = typeof result.requestState === "string" ? { requestState: result.requestState } : {};
    result = await session.wire.forward(method, { ...sent, inputResponses, ...requestState }, limits, hooks, label.queuedMs);
  }
  return result;
}

/** Asks the client each of a 2026-07-28 child's questions as a server-to-client request; the answers by key. */
async function askCaller(inputRequests: unknown, ctx: CallContext, what: string): Promise<Record<string, unknown>> {
  const caller = ctx.caller;
  if (!caller) throw new WireError(ErrorCode.InvalidRequest, `${what} asked for input, and no client is there to answer`);
  const signal = ctx.cancel?.signal ?? new AbortController().signal;
  const questions = Object.entries(isObject(inputRequests) ? inputRequests : {});
  const answers = await Promise.all(questions.map(([, request]) => caller.forward(request as { method: string }, signal)));
  return Object.fromEntries(questions.map(([key], at) => [key, answers[at]]));
}
