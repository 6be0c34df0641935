// A link: one connection's I/O as the one object that owns the connection sees it, and a transport of the SDK's as a link.
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

/** Hears one link: each message (decoded once), what went wrong on it, and its end. */
export interface LinkReceiver {
  /** `text`: the message as it was written, where the link read it as one line of its own (stdio). */
  receive(message: JSONRPCMessage, extra?: MessageExtraInfo, text?: string): void;
  /** Something that could not be taken or delivered; reported, and the link goes on. */
  error(error: Error): void;
  closed(): void;
}

/**
 * What a link's send answers for a message it handed over at once: one settled promise shared by all, so that a
 * caller that finds it (by identity) has nothing to wait for or catch, and spends no reaction and no turn on it.
 */
export const SENT: Promise<void> = Promise.resolve();

/** One connection: a client's (stdio, a Streamable HTTP session, one 2026-07-28 request) or a child's (a process, HTTP). */
export interface Link {
  /** Starts handing `receiver` what the link reads. */
  start(receiver: LinkReceiver): Promise<void>;
  /** Resolves once the message is written or queued; SENT when it was at once. */
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;
  /** Ends the connection from gaggle's side; the link then tells its receiver `closed`. */
  close(): Promise<void>;
  readonly sessionId?: string | undefined;
  setProtocolVersion?(version: string): void;
}

/**
 * A transport of the SDK's (the Streamable HTTP transports of client sessions and of remote children, the legacy
 * SSE one) as a link. The SDK's Transport interface is heard through the three callbacks its user sets before
 * start(): this is the one place gaggle sets them.
 */
export class TransportLink<T extends Transport = Transport> implements Link {
  constructor(readonly transport: T) {}

  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  start(receiver: LinkReceiver): Promise<void> {
    this.transport.onmessage = (message, extra) => receiver.receive(message, extra);
    this.transport.onerror = (error) => receiver.error(error);
    this.transport.onclose = () => receiver.closed();
    return this.transport.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.transport.send(message, options);
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  setProtocolVersion(version: string): void {
    this.transport.setProtocolVersion?.(version);
  }
}
