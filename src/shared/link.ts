// A link: one connection's I/O as the one object that owns the connection sees it, and a transport of the SDK's as a link.
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from "@modelcontextprotocol/sdk/types.js";

/** Hears one link: each message (decoded once), what went wrong on it, and its end. */
export interface LinkReceiver {
  /** `text`: the message as it was written, where the link read it as one line of its own (stdio). */
  receive(message: JSONRPCMessage, extra?: MessageExtraInfo, text?: string): void;
  /**
   * A line read from a stdio peer, offered before it is decoded: true when the receiver took it as it is (see
   * ChildWire.receiveLine); else the link decodes it and hands it to receive.
   */
  receiveLine?(line: string): boolean;
  /** Something that could not be taken or delivered; reported, and the link goes on. */
  error(error: Error): void;
  closed(): void;
}

/**
 * What a link's send answers for a message it handed over at once: one settled promise shared by all, so that a
 * caller that finds it (by identity) has nothing to wait for or catch, and spends no reaction and no turn on it.
 */
export const SENT: Promise<void> = Promise.resolve();

/** How many slots a RequestTable keeps while nothing is in them. */
const KEPT_SLOTS = 256;

/**
 * What one end of a connection keeps by request id for its requests in flight, in the order they came, as a Map
 * would. The oldest is held in two fields while no other is in flight (a sequential client's every call): a Map that
 * goes from one entry to none and back reallocates its table each time (V8 shrinks it on the delete), a few hundred
 * instructions and bytes a call for each table.
 *
 * The others are held by slot: a Map gives each id its slot in `values`, where the entry is. A Map that takes and lets
 * go of entries all the time (many calls in flight) replaces its table every few dozen of them, and V8 links each
 * table it leaves to the next one (for iterators). A scavenge takes every pointer from the old generation as live, so
 * once one table has reached it, the table after it survives every scavenge until a full collection and is promoted
 * in turn, and so on down the chain: had the tables held the entries (a request's record, its promise, its result),
 * every request would have been copied and promoted with them; held by slot, the tables hold ids and numbers only,
 * and a slot is emptied when its entry leaves.
 */
export class RequestTable<V> {
  /** The oldest entry's id, when it is held in the fields; undefined when they are empty. */
  private firstId: RequestId | undefined;
  private first: V | undefined;
  /** The slot of every entry newer than the one in the fields, or of every entry while the fields are empty. */
  private readonly slots = new Map<RequestId, number>();
  private readonly values: Array<V | undefined> = [];
  /** The slots of `values` no entry holds. */
  private readonly free: number[] = [];

  get(id: RequestId): V | undefined {
    if (id === this.firstId) return this.first;
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : this.values[slot];
  }

  set(id: RequestId, value: V): void {
    if (id === this.firstId) this.first = value;
    else if (this.firstId === undefined && this.slots.size === 0) {
      this.firstId = id;
      this.first = value;
    } else {
      const slot = this.slots.get(id);
      if (slot !== undefined) this.values[slot] = value;
      else this.slots.set(id, this.place(value));
    }
  }

  delete(id: RequestId): void {
    if (id === this.firstId) {
      this.firstId = undefined;
      this.first = undefined;
      return;
    }
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    this.slots.delete(id);
    if (this.slots.size === 0 && this.values.length > KEPT_SLOTS) {
      // A burst of calls in flight does not keep its slots once it is over.
      this.values.length = 0;
      this.free.length = 0;
    } else {
      this.values[slot] = undefined;
      this.free.push(slot);
    }
  }

  clear(): void {
    this.firstId = undefined;
    this.first = undefined;
    this.slots.clear();
    this.values.length = 0;
    this.free.length = 0;
  }

  /** Every entry, oldest first, as a list of its own: the table may change while it is walked. */
  entries(): Array<[RequestId, V]> {
    const held: Array<[RequestId, V]> = this.firstId === undefined ? [] : [[this.firstId, this.first as V]];
    for (const [id, slot] of this.slots) held.push([id, this.values[slot] as V]);
    return held;
  }

  /** A free slot holding `value`. */
  private place(value: V): number {
    const slot = this.free.pop();
    if (slot === undefined) return this.values.push(value) - 1;
    this.values[slot] = value;
    return slot;
  }
}

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
