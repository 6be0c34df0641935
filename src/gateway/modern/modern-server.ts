// gaggle's answers to 2026-07-28 requests: stateless, each request carrying who asks in its _meta envelope.
import { ErrorCode, type JSONRPCMessage, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext, ClientPrincipal } from "../../children/child.js";
import { WireError } from "../../shared/errors.js";
import { describeJson, isObject } from "../../shared/json.js";
import { GAGGLE_NAME, GAGGLE_VERSION } from "../../shared/version.js";
import { CAPABILITIES, configErrorText, instructionsWith } from "../capabilities.js";
import type { Gaggle } from "../gaggle.js";
import type { GatewayRequests } from "../requests.js";
import { contextOf } from "../call-context.js";
import { toolCallParams } from "../tool-handlers.js";
import { errorReply } from "../wire-errors.js";
import { passedMeta, readEnvelope, type Envelope } from "./envelope.js";
import type { ModernExchange } from "./exchange.js";
import { ListenStream, type SubscriptionFilter } from "./listen-stream.js";
import { ModernCaller } from "./modern-caller.js";
import { issuedByGaggle, ParkedCalls, type Abandonable, type CallBinding } from "./parked-calls.js";
import { ResumableCall } from "./resumable-call.js";
import { CACHEABLE_METHODS, META, MODERN_VERSIONS, REMOVED_METHODS } from "../../shared/modern-protocol.js";

type Params = Record<string, unknown>;

/**
 * Every answer says it is complete, and every answer a client may cache says for how long. gaggle's lists and
 * reads change whenever a child does, so they are never to be reused without asking (ttlMs 0); a client that
 * listens hears of list changes as they happen.
 */
const CACHE_HINTS = { ttlMs: 0, cacheScope: "private" } as const;

/** One round of a resumable call: the call, and the caller its notifications and questions go through. */
interface Round extends Abandonable {
  call: ResumableCall;
  caller: ModernCaller;
}

/** A call waits this long for its client to answer an input_required result, as the SDK's own servers wait for one round. */
const INPUT_WAIT_MS = 600_000;
/** Calls waiting for input at once, across every modern client. */
const MAX_PARKED = 1024;

export class ModernServer {
  /** What ends each open listen stream gracefully, and who opened it. */
  private readonly listens = new Map<() => void, ClientPrincipal>();
  private readonly parked = new ParkedCalls<Round>({ ttlMs: INPUT_WAIT_MS, max: MAX_PARKED });

  constructor(
    private readonly gaggle: Gaggle,
    private readonly requests: GatewayRequests,
  ) {}

  /**
   * Answers one request; resolves with its response, or with nothing once it was cancelled (nothing may be sent
   * for a cancelled request). A subscriptions/listen request resolves only when its stream ends.
   */
  async handle(request: JSONRPCRequest, exchange: ModernExchange): Promise<JSONRPCMessage | undefined> {
    try {
      const result = await this.dispatch(request, admit(request), exchange);
      if (exchange.cancel.aborted) return undefined;
      return { jsonrpc: "2.0", id: request.id, result: this.finish(request.method, result) };
    } catch (error) {
      if (exchange.cancel.aborted) return undefined;
      return errorResponse(request, error);
    }
  }

  /** Ends every listen stream with its graceful result, and cancels every call waiting for input, as when gaggle shuts down. */
  endListens(): void {
    for (const end of [...this.listens.keys()]) end();
    this.parked.abandonAll(new Error("gaggle is shutting down"));
  }

  /** Ends, gracefully, the listen streams of the clients `ended` picks (those whose bearer token is no longer taken). */
  endListensOf(ended: (who: ClientPrincipal) => boolean): void {
    for (const [end, who] of [...this.listens]) if (ended(who)) end();
  }

  private async dispatch(request: JSONRPCRequest, envelope: Envelope, exchange: ModernExchange): Promise<Params> {
    const { method } = request;
    const params: Params = isObject(request.params) ? request.params : {};
    const requests = this.requests;
    switch (method) {
      case "server/discover":
        return this.discover(envelope, exchange);
      case "tools/list":
        return requests.listTools() as Promise<Params>;
      case "tools/call": {
        const { name, arguments: args } = toolCallParams(params);
        return this.resumable({ method, target: toolTarget(name, args) }, params, envelope, exchange, (ctx) => requests.callTool(name, args, ctx));
      }
      case "resources/list":
        return requests.listResources() as Promise<Params>;
      case "resources/templates/list":
        return requests.listResourceTemplates() as Promise<Params>;
      case "resources/read": {
        const uri = stringParam(params, "uri");
        return this.resumable({ method, target: uri }, params, envelope, exchange, (ctx) => requests.readResource(uri, ctx));
      }
      case "prompts/list":
        return requests.listPrompts() as Promise<Params>;
      case "prompts/get": {
        const name = stringParam(params, "name");
        const args = objectParam(params, "arguments") as Record<string, string> | undefined;
        return this.resumable({ method, target: name }, params, envelope, exchange, (ctx) => requests.getPrompt(name, args, ctx));
      }
      case "completion/complete":
        // Without the envelope: the child hears the request in its own era, and the caller's _meta through ctx.
        return requests.complete({ ...params, _meta: passedMeta(params) } as never, this.context(params, envelope, exchange)) as Promise<Params>;
      case "subscriptions/listen":
        return this.listen(request, params, envelope, exchange);
      default:
        throw methodNotFound(`Method not found: ${method}`);
    }
  }

  /**
   * What a modern client learns first, as a 2025 client does from initialize: while the config file does not load,
   * why, in the instructions and (to a client that named a log level) as a log message.
   */
  private discover(envelope: Envelope, exchange: ModernExchange): Params {
    const problems = this.gaggle.configErrors();
    if (problems.length > 0) new ModernCaller(exchange, envelope).log({ level: "error", logger: "gaggle", data: configErrorText(problems) });
    return discoverResult(instructionsWith(this.gaggle.catalog.instructions, problems));
  }

  /** Progress goes on the request's own stream; the envelope's keys stay here. */
  private context(params: Params, envelope: Envelope, exchange: ModernExchange): CallContext {
    return contextOf(exchange.cancel, new ModernCaller(exchange, envelope), passedMeta(params), (progress) =>
      exchange.notify({ jsonrpc: "2.0", ...progress }),
    );
  }

  /**
   * A tool call, prompt or resource read, which a 2025-era child may pause to ask the client for input: the round
   * then ends with input_required and a requestState, and the retry that carries it (with the answers in
   * `inputResponses`) resumes the same call at the child.
   */
  private async resumable(
    request: Omit<CallBinding, "client" | "principal">,
    params: Params,
    envelope: Envelope,
    exchange: ModernExchange,
    start: (ctx: CallContext) => Promise<unknown>,
  ): Promise<Params> {
    const binding: CallBinding = { ...request, principal: exchange.principal, client: clientOf(envelope, exchange) };
    let round: Round;
    if (issuedByGaggle(params.requestState)) {
      round = this.parked.take(params.requestState, binding);
      round.caller.attach(exchange);
      const stopFollowing = exchange.cancel.onAbort((reason) => round.call.cancel.abort(reason));
      try {
        await round.call.answer(params.inputResponses);
      } finally {
        stopFollowing();
      }
    } else {
      const call = new ResumableCall(envelope.clientCapabilities);
      const caller = new ModernCaller(exchange, envelope, call);
      const ctx = contextOf(call.cancel, caller, passedMeta(params), (progress) => caller.notify({ jsonrpc: "2.0", ...progress }));
      ctx.holds = call.holds;
      // Answers to a 2026-07-28 child's own questions go back to it with the call.
      const resume = resumeParams(params);
      if (resume) ctx.resume = resume;
      call.follow(start(ctx) as Promise<Params>);
      round = { call, caller, abandon: (reason) => call.abandon(reason) };
    }
    try {
      const outcome = await round.call.round(exchange);
      if ("result" in outcome) return outcome.result;
      const requestState = this.parked.park(round, binding);
      round.call.park();
      return { resultType: "input_required", inputRequests: outcome.inputRequests, requestState };
    } finally {
      round.caller.attach(undefined);
    }
  }

  /** Open until the client closes it or gaggle shuts down; the children's resources it names are subscribed meanwhile. */
  private async listen(request: JSONRPCRequest, params: Params, envelope: Envelope, exchange: ModernExchange): Promise<Params> {
    const filter = filterParam(params);
    const stream = new ListenStream(request.id, filter, exchange);
    const unlisten = this.gaggle.hub.listen(stream);
    const honoured: SubscriptionFilter = {};
    for (const key of ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const) if (filter[key]) honoured[key] = true;
    const uris: string[] = [];
    for (const uri of filter.resourceSubscriptions ?? []) {
      // A URI that no child offers, or whose child refuses the subscription, is left out of what is honoured.
      const subscribed = await this.requests
        .followedOwner(uri, this.context(params, envelope, exchange))
        .then((owner) => this.gaggle.hub.subscribe(stream, uri, owner))
        .then(
          () => true,
          () => false,
        );
      if (subscribed) uris.push(uri);
    }
    if (filter.resourceSubscriptions) honoured.resourceSubscriptions = uris;
    stream.acknowledge(honoured);
    let end!: () => void;
    await new Promise<void>((resolve) => {
      end = resolve;
      this.listens.set(end, { identity: exchange.identity, principal: exchange.principal });
      exchange.cancel.onAbort(() => resolve());
    });
    this.listens.delete(end);
    await unlisten();
    return { _meta: { [META.subscriptionId]: request.id } };
  }

  /** A result that says its type and takes no cache hints is the child's own, passed on as it is (see keepAnswerLine). */
  private finish(method: string, result: Params): Params {
    const cacheable = CACHEABLE_METHODS.has(method);
    if (typeof result.resultType === "string" && !(cacheable && result.resultType === "complete")) return result;
    const finished: Params = { ...result, resultType: typeof result.resultType === "string" ? result.resultType : "complete" };
    if (cacheable && finished.resultType === "complete") {
      finished.ttlMs ??= CACHE_HINTS.ttlMs;
      finished.cacheScope ??= CACHE_HINTS.cacheScope;
    }
    return finished;
  }
}

/** A retry's answers and requestState meant for the child itself (a state gaggle did not issue). */
function resumeParams(params: Params): CallContext["resume"] {
  const { requestState, inputResponses } = params;
  if (requestState !== undefined && typeof requestState !== "string") {
    throw new WireError(
      ErrorCode.InvalidParams,
      `params.requestState must be the string a previous result gave; found ${describeJson(requestState)}`,
    );
  }
  if (requestState === undefined && inputResponses === undefined) return undefined;
  return { ...(inputResponses !== undefined && { inputResponses }), ...(requestState !== undefined && { requestState }) };
}

/** What a tools/call is for: the tool, and for execute_child_tool the child and the tool it names as well. */
function toolTarget(name: string, args: Record<string, unknown> | undefined): string {
  if (name !== "execute_child_tool" || args === undefined) return name;
  return `${name} ${JSON.stringify([args.server_id, args.tool_name])}`;
}

/** Which client a requestState is bound to: the client's name and, on a team member's path, the member. */
function clientOf(envelope: Envelope, exchange: ModernExchange): string {
  const member = exchange.identity ? `${exchange.identity.teamId}/${exchange.identity.agentId}` : "";
  return `${envelope.clientInfo?.name ?? ""}@${member}`;
}

function discoverResult(instructions: string): Params {
  return {
    supportedVersions: [...MODERN_VERSIONS],
    capabilities: CAPABILITIES,
    instructions,
    _meta: { [META.serverInfo]: { name: GAGGLE_NAME, version: GAGGLE_VERSION } },
  };
}

/**
 * Whether gaggle takes a modern request at all, before anything runs: a method this era removed is not found
 * (-32601), and the envelope must be whole and name a version gaggle speaks (-32602, -32022).
 */
export function admit(request: JSONRPCRequest): Envelope {
  if (REMOVED_METHODS.has(request.method)) throw methodNotFound(`${request.method} is not part of MCP ${MODERN_VERSIONS.join(", ")}`);
  return readEnvelope(request.params);
}

/** The error response of a failed request. The specification forbids -32002 in this era: resource not found is -32602. */
export function errorResponse(request: Pick<JSONRPCRequest, "id">, error: unknown): JSONRPCMessage {
  return errorReply(request.id, error, (code) => (code === -32002 ? ErrorCode.InvalidParams : code));
}

function methodNotFound(message: string): WireError {
  return new WireError(ErrorCode.MethodNotFound, message);
}

function stringParam(params: Params, key: string): string {
  const value = params[key];
  if (typeof value !== "string") throw new WireError(ErrorCode.InvalidParams, `params.${key} must be a string; found ${describeJson(value)}`);
  return value;
}

function objectParam(params: Params, key: string): Record<string, unknown> | undefined {
  const value = params[key];
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new WireError(ErrorCode.InvalidParams, `params.${key} must be an object; found ${describeJson(value)}`);
  return value;
}

function filterParam(params: Params): SubscriptionFilter {
  const filter = params.notifications;
  if (!isObject(filter)) throw new WireError(ErrorCode.InvalidParams, `params.notifications must be an object; found ${describeJson(filter)}`);
  const uris = filter.resourceSubscriptions;
  if (uris !== undefined && !(Array.isArray(uris) && uris.every((uri) => typeof uri === "string"))) {
    throw new WireError(ErrorCode.InvalidParams, `params.notifications.resourceSubscriptions must be an array of URIs; found ${describeJson(uris)}`);
  }
  return filter as SubscriptionFilter;
}
