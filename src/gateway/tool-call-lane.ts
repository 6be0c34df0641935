// tools/call requests answered beside the SDK's Protocol, which still handles every other message of the session.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { TaskRequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { AnySchema, SchemaOutput } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { Cancellation } from "../children/cancellation.js";
import { WireError } from "../shared/errors.js";
import { describeJson, isObject } from "../shared/json.js";
import type { CallExtra } from "./client-session.js";
import { RequestsInFlight } from "./requests-in-flight.js";
import { errorReply } from "./wire-errors.js";

/** What gaggle reads of a tools/call request; everything else in it is passed along as it came. */
export interface ToolCallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export type ToolCallHandler = (params: ToolCallParams, extra: CallExtra) => Promise<CallToolResult>;

/**
 * Connects `server` to `transport` and takes the session's tools/call requests off the SDK's Protocol.
 *
 * tools/call is a gateway's hot path, and the Protocol spends more time per call than the rest of gaggle:
 * each message is parsed by several zod schemas in turn to learn its kind, and each request gets the
 * bookkeeping of features gaggle does not use on calls (tasks, related-task queues). Here a tools/call runs
 * with the same contract the Protocol gives a handler: a cancellation that notifications/cancelled and the
 * end of the connection abort (its AbortSignal is made only if something asks for one), no reply once it is
 * cancelled, notifications and requests sent as related to the call (over Streamable HTTP they travel on the
 * call's own stream), and a thrown error answered as the JSON-RPC error toWireError makes of it, as every
 * other request's handler does.
 */
export async function connectWithToolCallLane(server: Server, transport: Transport, handle: ToolCallHandler): Promise<void> {
  // connect() installs the Protocol's handlers before it awaits the transport's start, so they can be wrapped
  // here before the first message is read.
  const connected = server.connect(transport);
  const toProtocol = transport.onmessage!;
  const closeProtocol = transport.onclose;
  const inFlight = new RequestsInFlight();

  const run = (request: JSONRPCRequest) => {
    const cancel = inFlight.begin(request.id);
    const extra = new ToolCallExtra(server, request.id, cancel);
    let result: Promise<CallToolResult>;
    try {
      result = handle(toolCallParams(request.params), extra);
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (value) => reply(request.id, cancel, () => ({ jsonrpc: "2.0", id: request.id, result: value })),
      (error: unknown) => reply(request.id, cancel, () => errorReply(request.id, error)),
    );
  };

  // A reply that cannot be made or sent (a transport that throws, a result JSON cannot hold) is reported
  // and that call goes unanswered; it never becomes an unhandled rejection that would stop gaggle.
  const unsent = (error: unknown) => server.onerror?.(new Error(`Failed to send a tools/call reply: ${String(error)}`));
  const reply = (id: RequestId, cancel: Cancellation, build: () => JSONRPCMessage) => {
    inFlight.end(id, cancel);
    if (cancel.aborted) return;
    try {
      transport.send(build()).catch(unsent);
    } catch (error) {
      unsent(error);
    }
  };

  transport.onmessage = (message, extra) => {
    if ("method" in message && message.method === "tools/call" && "id" in message) return run(message);
    if (inFlight.cancelledBy(message)) return;
    toProtocol(message, extra);
  };
  transport.onclose = () => {
    inFlight.abortAll(new McpError(ErrorCode.ConnectionClosed, "Connection closed"));
    closeProtocol?.();
  };
  await connected;
}

/**
 * What a tools/call handler gets besides its params, as the Protocol gives it to other handlers: messages it
 * sends are related to the call, and none is sent once the call is cancelled. A class, since one is made per call.
 */
class ToolCallExtra implements CallExtra {
  constructor(
    private readonly server: Server,
    private readonly requestId: RequestId,
    readonly cancel: Cancellation,
  ) {}

  get signal(): AbortSignal {
    return this.cancel.signal;
  }

  async sendNotification(notification: ServerNotification): Promise<void> {
    if (!this.cancel.aborted) await this.server.notification(notification, { relatedRequestId: this.requestId });
  }

  async sendRequest<T extends AnySchema>(request: ServerRequest, resultSchema: T, options?: TaskRequestOptions): Promise<SchemaOutput<T>> {
    if (this.cancel.aborted) throw new McpError(ErrorCode.ConnectionClosed, "Request was cancelled");
    return this.server.request(request, resultSchema, { ...options, relatedRequestId: this.requestId });
  }
}

/** The fields routing reads, checked; a request without them is answered -32602 before anything runs. */
export function toolCallParams(params: unknown): ToolCallParams {
  const fields = isObject(params) ? params : {};
  if (typeof fields.name !== "string") {
    throw new WireError(ErrorCode.InvalidParams, `tools/call needs params.name, the tool's name as a string; found ${describeJson(fields.name)}`);
  }
  for (const key of ["arguments", "_meta"] as const) {
    const value = fields[key];
    if (value !== undefined && !isObject(value)) {
      throw new WireError(ErrorCode.InvalidParams, `tools/call params.${key} must be an object; found ${describeJson(value)}`);
    }
  }
  return fields as unknown as ToolCallParams;
}
