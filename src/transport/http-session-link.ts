// One HTTP client session as a link: the SDK's Streamable HTTP transport, with a direct stream for a tools/call POST.
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { ServerResponse } from "node:http";
import { TransportLink, type Link, type LinkReceiver } from "../shared/link.js";
import { ClientOutbox, type OutboxOptions } from "./client-outbox.js";
import { RequestStreams } from "./request-stream.js";
import { writeAnswersAsWritten } from "./sdk-sse-answer.js";

/**
 * One client session's link: the SDK's Streamable HTTP transport takes the session's requests and streams, but for
 * a POST of one tools/call, answered on a RequestStream of its own; what the connection sends waits its turn in the
 * outbox, one lane per stream (see ClientOutbox.carry), and goes to the request's RequestStream or to the SDK.
 */
export class HttpSessionLink implements Link {
  private readonly link: TransportLink<StreamableHTTPServerTransport>;
  readonly outbox: ClientOutbox;
  private readonly streams = new RequestStreams();
  private receiver: LinkReceiver | undefined;
  private ended = false;

  constructor(sessionId: string, outbox: Omit<OutboxOptions, "onUnsent">) {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => sessionId });
    writeAnswersAsWritten(transport);
    this.link = new TransportLink(transport);
    this.outbox = new ClientOutbox((message, options) => this.write(message, options), {
      ...outbox,
      onUnsent: (error) => this.receiver?.error(error),
    });
  }

  /**
   * Answers a POST of one tools/call (see directToolCall) on a stream of its own, as the SDK's transport would;
   * false, and nothing done, while the session is not yet initialized or has closed (the SDK answers those).
   */
  answer(call: JSONRPCRequest, res: ServerResponse): boolean {
    const sessionId = this.link.sessionId;
    if (this.ended || sessionId === undefined || !this.receiver) return false;
    this.streams.open(call.id, res, sessionId);
    this.receiver.receive(call);
    return true;
  }

  /** Ends the stream of a cancelled request, wherever it is answered. */
  closeStream(id: RequestId): void {
    this.streams.close(id);
    this.link.transport.closeSSEStream(id);
  }

  private write(message: JSONRPCMessage, options: TransportSendOptions | undefined): Promise<void> {
    try {
      if (this.streams.write(message, options?.relatedRequestId)) return Promise.resolve();
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.link.send(message, options);
  }

  get transport(): StreamableHTTPServerTransport {
    return this.link.transport;
  }

  get sessionId(): string | undefined {
    return this.link.sessionId;
  }

  start(receiver: LinkReceiver): Promise<void> {
    this.receiver = receiver;
    return this.link.start({
      receive: (message, extra) => receiver.receive(message, extra),
      error: (error) => receiver.error(error),
      closed: () => {
        this.ended = true;
        this.streams.closeAll();
        this.outbox.closed();
        receiver.closed();
      },
    });
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.outbox.send(message, options);
  }

  close(): Promise<void> {
    return this.link.close();
  }
}
