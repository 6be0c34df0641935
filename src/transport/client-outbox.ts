// What gaggle has sent one client and the client has not read yet, bounded: past the bound, logs and progress are dropped and counted.
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, JSONRPCNotification, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Writable } from "node:stream";
import { messageText } from "../shared/json-rpc-codec.js";
import { RequestTable, SENT } from "../shared/link.js";
import { lazyLogger } from "../shared/log.js";

/** A stream a client reads gaggle's messages from: gaggle's stdout, or the HTTP response of one SSE stream. */
export type OutStream = Pick<Writable, "writableLength" | "writableNeedDrain" | "writableHighWaterMark" | "on" | "off">;

export interface OutboxOptions {
  /** gateway.max_client_queue_bytes: what may wait for the client, in its streams' buffers and here. */
  maxBytes: number;
  /** The client's session, for the log. */
  session: string;
  /**
   * Told `true` when an answer, a request or another message that is never dropped had to be queued past
   * the bound, and `false` once the client has read the queue back under it (or is gone).
   */
  onBacklog(backlogged: boolean): void;
  /** A message could not be handed to the client's transport. */
  onUnsent(error: Error): void;
}

/** Hands a message to the client's transport: a line on stdout, or the SDK's Streamable HTTP transport. */
export type ClientWrite = (message: JSONRPCMessage, options?: TransportSendOptions) => Promise<void>;

/** What a client that is not reading loses first: detail, never an answer. */
const DROPPABLE = new Set(["notifications/message", "notifications/progress"]);

export function isDroppable(message: JSONRPCMessage): boolean {
  return "method" in message && !("id" in message) && DROPPABLE.has(message.method);
}

/** The warning that takes the place of `dropped` log and progress notifications. */
export function dropNotice(dropped: number): JSONRPCNotification {
  const data = `gaggle dropped ${dropped} log/progress notifications while this client was not reading`;
  return { jsonrpc: "2.0", method: "notifications/message", params: { level: "warning", logger: "gaggle", data } };
}

/** Bound on first use, after the log level is set. */
const log = lazyLogger({ subsystem: "client" });

interface Held {
  message: JSONRPCMessage;
  options: TransportSendOptions | undefined;
  /** Its size as JSON: what it will take in the stream. */
  bytes: number;
}

/** One stream's messages that wait for it to drain, in order, and what was dropped for it meanwhile. */
class Lane {
  private readonly held: Held[] = [];
  private head = 0;
  heldBytes = 0;
  dropped = 0;
  /** A flush is due on the next turn (the stream did not ask to be waited for, but more is held). */
  flushDue = false;
  /** Its place in its outbox's list of open streams. */
  at = -1;

  constructor(
    readonly out: OutStream,
    /** Where a message about this stream goes over Streamable HTTP: a request it carries the answer to, if any. */
    readonly relatedRequestId: RequestId | undefined,
  ) {}

  get bytes(): number {
    return this.out.writableLength + this.heldBytes;
  }

  get holding(): boolean {
    return this.head < this.held.length;
  }

  push(held: Held): void {
    this.held.push(held);
    this.heldBytes += held.bytes;
  }

  shift(): Held {
    const next = this.held[this.head]!;
    this.held[this.head++] = undefined as never;
    this.heldBytes -= next.bytes;
    // Taken from the front by an index, and compacted now and then: shift() on a long queue copies it each time.
    if (this.head > 1024 && this.head * 2 > this.held.length) {
      this.held.splice(0, this.head);
      this.head = 0;
    }
    return next;
  }

  /** Empties the lane: what it held, and its count of what it dropped. */
  take(): Held[] {
    const rest = this.held.slice(this.head);
    this.held.length = 0;
    this.head = 0;
    this.heldBytes = 0;
    this.dropped = 0;
    return rest;
  }
}

/**
 * What a client connection sends goes through here, so that what waits for the client stays under `maxBytes`,
 * counting the streams' own buffers. A message goes to its stream at once while the stream takes it; while the stream asks to be
 * waited for (it needs draining) messages wait here, in order, and go out as it drains. Once the client holds
 * `maxBytes` unread, log and progress notifications are dropped, counted per stream, and the count is told to
 * the client in one warning in their place: before the next message that stream carries, or once it has
 * drained. Answers and requests are never dropped: queued past the bound, they make the client backlogged
 * (`onBacklog`), and the children serving it stop being read until it reads.
 *
 * It listens for 'drain' once per stream, never once per write.
 */
export class ClientOutbox {
  /**
   * Over Streamable HTTP: the stream of each request id, and of messages related to none. Neither they nor the list of
   * open streams is a Map or a Set of streams: a stream is opened and closed a request, and a churning Map keeps every
   * stream it held alive until a full collection (see RequestTable).
   */
  private readonly byRequest = new RequestTable<Lane>();
  private unrelated: Lane | undefined;
  /** The open streams, in no order: a closed one's place goes to the last. */
  private readonly lanes: Lane[] = [];
  /** On stdio: the one stream every message travels on. */
  private readonly only: Lane | undefined;
  private backlogged = false;

  /** `only`: the one stream every message travels on (stdio); without it, streams are named with `carry`. */
  constructor(
    private readonly write: ClientWrite,
    private readonly options: OutboxOptions,
    only?: OutStream,
  ) {
    // Once stdout has closed there is no one to write to.
    this.only = only && this.watch(new Lane(only, undefined), (lane) => lane.take());
  }

  /** The client's connection closed: nothing it left unread holds the children any more. */
  closed(): void {
    this.setBacklog(false);
  }

  /**
   * Messages for `keys` (request ids whose answers it carries; undefined for messages related to no request)
   * travel on `out` until it closes. A key an open stream carries already stays with that stream.
   */
  carry(out: OutStream, keys: Array<RequestId | undefined>): void {
    const free = keys.filter((key) => this.laneOf(key) === undefined);
    if (free.length === 0) return;
    const lane = this.watch(new Lane(out, free[0]), (closed) => {
      for (const key of free) if (this.laneOf(key) === closed) this.assign(key, undefined);
      // The SDK forgets the requests whose answers it can no longer deliver only when it is given them.
      for (const held of closed.take()) this.write(held.message, held.options).catch(() => {});
    });
    for (const key of free) this.assign(key, lane);
  }

  private laneOf(key: RequestId | undefined): Lane | undefined {
    return key === undefined ? this.unrelated : this.byRequest.get(key);
  }

  /** `lane` carries `key` from now on; undefined: no stream does. */
  private assign(key: RequestId | undefined, lane: Lane | undefined): void {
    if (key === undefined) this.unrelated = lane;
    else if (lane) this.byRequest.set(key, lane);
    else this.byRequest.delete(key);
  }

  /** Resolves once the message is written or queued; one dropped for a client that is not reading resolves too. */
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const lane = this.only ?? this.laneOf("method" in message ? options?.relatedRequestId : message.id);
    // A stream gaggle does not know of (an answer to initialize over HTTP) is the transport's alone.
    if (!lane) return this.write(message, options);
    // A stdio client's one stream is asked here: queuedBytes, a call of its own, ran unoptimized on every message.
    if ((this.only ? this.only.bytes : this.queuedBytes()) >= this.options.maxBytes) {
      if (isDroppable(message)) {
        lane.dropped++;
        return SENT;
      }
      this.setBacklog(true);
    }
    if (lane.dropped > 0) {
      const notice = this.dropNotice(lane);
      this.put(lane, notice.message, notice.options).catch((error: unknown) => this.unsent(error));
    }
    return this.put(lane, message, options);
  }

  /** Everything the client has not read yet, over all its streams. */
  private queuedBytes(): number {
    if (this.only) return this.only.bytes;
    let total = 0;
    for (const lane of this.lanes) total += lane.bytes;
    return total;
  }

  /** Writes `message` now if the stream takes it and nothing waits before it; otherwise it waits its turn. */
  private put(lane: Lane, message: JSONRPCMessage, options: TransportSendOptions | undefined): Promise<void> {
    if (!lane.holding && !lane.out.writableNeedDrain) return this.write(message, options);
    // Its size as it will be written: a child's answer passed on as its line is that line, not serialized again.
    lane.push({ message, options, bytes: messageText(message).length });
    return SENT;
  }

  /**
   * Hands the stream what waits for it, a high-water mark's worth per turn and only while it takes more. Over
   * Streamable HTTP a message reaches the response a turn after the SDK has it, so the stream's own state is
   * read again on the next turn, never in the same loop; on stdio the write is at once and the loop ends there.
   */
  private flush(lane: Lane): void {
    lane.flushDue = false;
    let budget = lane.out.writableHighWaterMark;
    while (lane.holding && !lane.out.writableNeedDrain && budget > 0) {
      const next = lane.shift();
      budget -= next.bytes;
      this.write(next.message, next.options).catch((error: unknown) => this.unsent(error));
    }
    if (!lane.holding && lane.dropped > 0 && !lane.out.writableNeedDrain) {
      const notice = this.dropNotice(lane);
      this.write(notice.message, notice.options).catch((error: unknown) => this.unsent(error));
    }
    if (lane.holding && !lane.out.writableNeedDrain && !lane.flushDue) {
      lane.flushDue = true;
      setImmediate(() => this.flush(lane));
    }
    this.releaseBacklogIfDrained();
  }

  /** The warning that takes the place of what was dropped for `lane`; its count starts again. */
  private dropNotice(lane: Lane): Held {
    const dropped = lane.dropped;
    lane.dropped = 0;
    log.info({ session: this.options.session, dropped }, "the client was not reading: log and progress notifications dropped");
    const options = lane.relatedRequestId === undefined ? undefined : { relatedRequestId: lane.relatedRequestId };
    return { message: dropNotice(dropped), options, bytes: 0 };
  }

  /** Follows the stream's drains until it closes; then `closed` disposes of what the lane still holds. */
  private watch(lane: Lane, closed: (lane: Lane) => void): Lane {
    const drained = () => this.flush(lane);
    const gone = () => {
      lane.out.off("drain", drained);
      lane.out.off("close", gone);
      const last = this.lanes.pop()!;
      if (last !== lane) {
        this.lanes[lane.at] = last;
        last.at = lane.at;
      }
      closed(lane);
      this.releaseBacklogIfDrained();
    };
    lane.out.on("drain", drained);
    lane.out.on("close", gone);
    lane.at = this.lanes.push(lane) - 1;
    return lane;
  }

  /** The client is no longer backlogged once what waits for it is back under the bound. */
  private releaseBacklogIfDrained(): void {
    if (this.backlogged && this.queuedBytes() < this.options.maxBytes) this.setBacklog(false);
  }

  private setBacklog(backlogged: boolean): void {
    if (this.backlogged === backlogged) return;
    this.backlogged = backlogged;
    this.options.onBacklog(backlogged);
  }

  private unsent(error: unknown): void {
    this.options.onUnsent(new Error(`could not send a message to the client: ${String(error)}`));
  }
}
