// What gaggle hears from a 2026-07-28 child: list changes and resource updates come only on a subscriptions/listen
// stream gaggle holds open, and reach the session as the unsolicited notifications a 2025 child sends.
import type { JSONRPCMessage, JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { isObject } from "../../shared/json.js";
import { META } from "../../shared/modern-protocol.js";

/** The filter of a listen request, as the specification names its fields. */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/** How a listen request travels to the child, and how its stream is ended. */
export interface ListenChannel {
  /**
   * Sends `request`. What the stream carries comes back through `deliver` (or through the transport's own
   * messages, where the stream shares the connection); `dropped` is called if the stream ends without an
   * answer to the request. Returns what ends the stream.
   */
  open(request: JSONRPCRequest, deliver: (message: JSONRPCMessage) => void, dropped: () => void): () => void;
}

/** A stream that shares the connection (stdio, SSE): ended with notifications/cancelled, as the specification asks. */
export function inBandChannel(send: (message: JSONRPCMessage) => Promise<void>): ListenChannel {
  return {
    open(request, _deliver, dropped) {
      send(request).catch(dropped);
      return () => void send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: request.id } }).catch(() => {});
    },
  };
}

/** Every listen request's id starts so: never an id the SDK client or a forwarded request uses. */
const LISTEN_PREFIX = "gaggle-listen-";
/** Streams that drop before they are acknowledged are opened again at most this often in a row. */
const MAX_REOPENS = 3;
const REOPEN_DELAY_MS = 1000;
/** A stream that lived this long before it ended counts as a fresh start: the reopenings in a row start over. */
const STEADY_MS = 60_000;

interface Stream {
  id: string;
  /** When it became the current stream. */
  since: number;
  end: () => void;
  acknowledged: (honoured: ListenFilter | undefined) => void;
}

/**
 * One listen stream at a time, asking for the list changes the child announces it sends and for updates of
 * the resources subscribed through it. Changing what it asks for opens a new stream and ends the old one once
 * the new one is acknowledged, so nothing is missed in between and nothing is heard twice: only the current
 * stream's notifications pass, without the subscription id that tagged them.
 */
export class ChildListen {
  private readonly uris = new Set<string>();
  private readonly opening = new Map<string, Stream>();
  private current: Stream | undefined;
  private lastId = 0;
  private dropsInARow = 0;
  private closed = false;
  /** Reopenings run one after another, each with the filter of its time. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly channel: ListenChannel,
    private readonly lists: ListenFilter,
    private readonly options: {
      envelope: () => Record<string, unknown>;
      /** Where the stream's notifications go, untagged. */
      deliver: (message: JSONRPCMessage) => void;
      ackTimeoutMs: number;
    },
  ) {}

  /** The list changes the child's capabilities announce; an empty filter when it announces none. */
  static listsOf(capabilities: Record<string, unknown>): ListenFilter {
    const announces = (kind: string) => isObject(capabilities[kind]) && capabilities[kind].listChanged === true;
    return {
      ...(announces("tools") && { toolsListChanged: true }),
      ...(announces("prompts") && { promptsListChanged: true }),
      ...(announces("resources") && { resourcesListChanged: true }),
    };
  }

  /** Opens the first stream, if the child announces anything to listen for. */
  start(): Promise<void> {
    return this.reopen().then(() => {});
  }

  /** True when the child took the subscription (its acknowledgement names the URI). */
  async subscribe(uri: string): Promise<boolean> {
    this.uris.add(uri);
    const honoured = await this.reopen();
    const taken = honoured?.resourceSubscriptions?.includes(uri) === true;
    if (!taken) this.uris.delete(uri);
    return taken;
  }

  async unsubscribe(uri: string): Promise<void> {
    if (this.uris.delete(uri)) await this.reopen();
  }

  /**
   * Takes what belongs to gaggle's listen streams; true when `message` was one of theirs. An answer to a listen
   * request is the stream's end; an acknowledgement makes its stream the current one.
   */
  take(message: JSONRPCMessage): boolean {
    if (!("method" in message)) {
      if (typeof message.id !== "string" || !message.id.startsWith(LISTEN_PREFIX)) return false;
      this.ended(message.id);
      return true;
    }
    const params = isObject(message.params) ? message.params : {};
    const meta = isObject(params._meta) ? params._meta : {};
    const id = meta[META.subscriptionId];
    if ("id" in message || typeof id !== "string" || !id.startsWith(LISTEN_PREFIX)) return false;
    if (message.method === "notifications/subscriptions/acknowledged") {
      this.opening.get(id)?.acknowledged(isObject(params.notifications) ? params.notifications : {});
    } else if (id === this.current?.id) {
      const { [META.subscriptionId]: _tag, ...rest } = meta;
      this.options.deliver({ ...message, params: { ...params, _meta: rest } } as JSONRPCMessage);
    }
    return true;
  }

  close(): void {
    this.closed = true;
    this.current?.end();
    this.current = undefined;
    for (const stream of [...this.opening.values()]) stream.acknowledged(undefined);
  }

  private reopen(): Promise<ListenFilter | undefined> {
    const next = this.turn.then(() => this.open());
    this.turn = next.catch(() => {});
    return next;
  }

  /** Opens a stream with today's filter; resolves with what the child honours, undefined if it never acknowledged. */
  private open(): Promise<ListenFilter | undefined> {
    const filter: ListenFilter = { ...this.lists, ...(this.uris.size > 0 && { resourceSubscriptions: [...this.uris] }) };
    if (this.closed || Object.keys(filter).length === 0) {
      this.current?.end();
      this.current = undefined;
      return Promise.resolve(this.closed ? undefined : {});
    }
    const id = `${LISTEN_PREFIX}${++this.lastId}`;
    const request: JSONRPCRequest = {
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { _meta: this.options.envelope(), notifications: filter },
    };
    return new Promise((resolve) => {
      const timer = setTimeout(() => stream.acknowledged(undefined), this.options.ackTimeoutMs).unref();
      const stream: Stream = {
        id,
        since: 0,
        end: () => {},
        acknowledged: (honoured) => {
          clearTimeout(timer);
          if (!this.opening.delete(id)) return;
          if (honoured === undefined || this.closed) stream.end();
          else this.becomeCurrent(stream);
          resolve(honoured);
        },
      };
      this.opening.set(id, stream);
      stream.end = this.channel.open(
        request,
        (message) => void this.take(message),
        () => this.ended(id),
      );
    });
  }

  private becomeCurrent(stream: Stream): void {
    const previous = this.current;
    stream.since = Date.now();
    this.current = stream;
    previous?.end();
  }

  /** A stream ended from the child's side: answered (gracefully or with an error) or dropped. */
  private ended(id: string): void {
    this.opening.get(id)?.acknowledged(undefined);
    const stream = this.current;
    if (id !== stream?.id) return;
    this.current = undefined;
    if (Date.now() - stream.since > STEADY_MS) this.dropsInARow = 0;
    // A stream that drops is opened again, a few times in a row at most: the changes it carried matter.
    if (this.closed || ++this.dropsInARow > MAX_REOPENS) return;
    setTimeout(() => void this.reopen(), REOPEN_DELAY_MS).unref();
  }
}
