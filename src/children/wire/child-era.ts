// Which protocol era a child speaks, found as the specification asks a client of both eras to find it, and the
// 2026-07-28 wire spoken under an SDK client that knows only sessions: a part of the child's wire.
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, LATEST_PROTOCOL_VERSION, type JSONRPCMessage, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { GaggleError } from "../../shared/errors.js";
import { isObject } from "../../shared/json.js";
import { isModernErrorCode, META, MODERN_ERRORS, MODERN_VERSION } from "../../shared/modern-protocol.js";
import { ChildListen, inBandChannel, type ListenChannel } from "./child-listen.js";
import type { ChildWire } from "./child-wire.js";
import type { Answer } from "./forwarded-request.js";
import { isCancelledStream } from "./modern-fetch.js";

/** The probe's own request id, never one the SDK client or a forwarded request uses. */
const PROBE_ID = "gaggle-discover";

/**
 * "auto" finds out (see EraOptions.discoverFirst); "2026-07-28" asks with server/discover only; "2025-11-25"
 * initializes only.
 */
export type EraChoice = "auto" | "2025-11-25" | "2026-07-28";

export interface EraOptions {
  choice: EraChoice;
  /**
   * How "auto" finds out. With discoverFirst it asks server/discover, and initializes unless the child
   * answers as a 2026-07-28 server: the specification's way on both transports (over HTTP a 2025 server
   * refuses the sessionless POST; on stdio it answers -32601). Without, it initializes, and asks
   * server/discover only when the child refuses initialize as a version it does not speak (-32022): for a
   * stdio child already seen to stay silent on, or end at, a request before initialize (see probeFailed).
   */
  discoverFirst: boolean;
  /** gaggle's own envelope: what a request carries unless the caller's envelope says otherwise. */
  envelope: () => Record<string, unknown>;
  /** How long a stdio child may stay silent on server/discover before it is taken for a 2025 server. */
  probeTimeoutMs: number;
  /** How a listen stream reaches the child; by default it shares the connection. */
  listenChannel?: ListenChannel;
}

/**
 * The SDK client opens every session with `initialize`, and the era decides what the child is sent first:
 * `server/discover` (always with "2026-07-28", and with "auto" unless discoverFirst is off), or the `initialize`
 * itself, with `server/discover` next if the child refuses it with -32022. A DiscoverResult means the child speaks
 * 2026-07-28, and the client is handed an initialize result made from it. In the modern era every request then
 * carries the envelope in `_meta`, the session's notifications/initialized is not sent, and what the era removed is
 * done the new way here: the level of logging/setLevel is carried on each request, ping is answered, and list
 * changes and resource subscriptions (resources/subscribe) travel on a subscriptions/listen stream (ChildListen).
 * The answers it waits for (the probe's, the initialize it may see refused) are awaited in the wire's one table.
 */
export class ChildEra {
  /** Known once the child answered the probe (or initialize): the revision it speaks. */
  version: string | undefined;
  /**
   * What a stdio child did with a server/discover sent before initialize, when it did not answer: stayed
   * silent past `probeTimeoutMs`, or ended its connection. Either marks a 2025 server best initialized first.
   */
  probeFailed: "silent" | "closed" | undefined;
  /** Set by logging/setLevel in the modern era: the level each request asks for. */
  private logLevel: string | undefined;
  /** True while the probe is sent: what it meets (a 2025 server's refusal of the sessionless POST) is its answer, not a fault. */
  private probing = false;
  /** The modern era's listen stream, once the child is known to speak it. */
  private listen: ChildListen | undefined;

  constructor(
    private readonly wire: ChildWire,
    private readonly options: EraOptions,
  ) {}

  get modern(): boolean {
    return this.version === MODERN_VERSION;
  }

  close(): void {
    this.listen?.close();
  }

  /** Whether an error of the connection is a fault: not while the probe is sent, nor a fetch gaggle aborted to cancel its request. */
  reportable(error: Error): boolean {
    return !this.probing && !isCancelledStream(error);
  }

  /**
   * Takes an answer the wire awaited nothing for, when it is the era's: a late probe answer after silence was
   * taken for a 2025 server (it says the child was slow to start, an `npx -y` download, say, not that it ignores
   * the probe), or the end of a listen stream.
   */
  takeAnswer(message: Answer): boolean {
    if (message.id === PROBE_ID) {
      if (this.probeFailed === "silent") this.probeFailed = undefined;
      return true;
    }
    return this.listen?.take(message) ?? false;
  }

  /** Takes a notification of a listen stream. */
  takeNotification(message: JSONRPCMessage): boolean {
    return this.listen?.take(message) ?? false;
  }

  /** What the SDK client or a forwarded request sends, in the era the child speaks. */
  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.version === undefined && "method" in message && message.method === "initialize" && "id" in message) {
      return this.negotiate(message as JSONRPCRequest, options);
    }
    const link = this.wire.link;
    if (!this.modern || !("method" in message)) return link.send(message, options);
    // The era dropped roots/list_changed: a child asks for the roots when it needs them.
    if (message.method === "notifications/initialized" || message.method === "notifications/roots/list_changed") return;
    if (!("id" in message)) return link.send(message, options);
    if (message.method === "ping") return this.reply(message.id, {});
    if (message.method === "resources/subscribe" || message.method === "resources/unsubscribe") return this.subscription(message);
    if (message.method === "logging/setLevel") {
      this.logLevel = (message.params as { level?: string } | undefined)?.level;
      return this.reply(message.id, {});
    }
    return link.send({ ...message, params: this.enveloped(message.params) }, options);
  }

  /** The request's params with the envelope in `_meta`; keys the request set already (the caller's) win. */
  private enveloped(params: unknown): Record<string, unknown> {
    const given = isObject(params) ? params : {};
    const meta = isObject(given._meta) ? given._meta : {};
    const envelope = { ...this.options.envelope(), ...(this.logLevel !== undefined && { [META.logLevel]: this.logLevel }) };
    return { ...given, _meta: { ...envelope, ...meta } };
  }

  private async negotiate(initialize: JSONRPCRequest, options: TransportSendOptions | undefined): Promise<void> {
    const { choice, discoverFirst } = this.options;
    if (choice === "2025-11-25") return this.legacy(initialize, options);
    if (choice === "auto" && !discoverFirst && !(await this.refusesInitialize(initialize, options))) return;
    const answer = await this.discoverAgain(options);
    const discovered = answer !== undefined && "result" in answer && Array.isArray(answer.result.supportedVersions) ? answer.result : undefined;
    // Anything but a 2026-07-28 server's answer (a DiscoverResult, or one of the era's own refusals) means a 2025 server.
    const modernAnswer = discovered !== undefined || (answer !== undefined && "error" in answer && isModernErrorCode(answer.error.code));
    if (choice === "auto" && discoverFirst && !modernAnswer) return this.legacy(initialize, options);
    if (discovered && (discovered.supportedVersions as unknown[]).includes(MODERN_VERSION)) {
      this.version = MODERN_VERSION;
      const result = initializeResultOf(discovered);
      await this.reply(initialize.id, result);
      return this.listenTo(result.capabilities as Record<string, unknown>);
    }
    if (discovered) {
      const message = `it speaks MCP ${(discovered.supportedVersions as unknown[]).join(", ")}; gaggle speaks ${MODERN_VERSION} and ${LATEST_PROTOCOL_VERSION}`;
      return this.deliver({ jsonrpc: "2.0", id: initialize.id, error: { code: MODERN_ERRORS.unsupportedVersion, message } });
    }
    // The child's refusal of server/discover is what the client is told.
    if (answer !== undefined && "error" in answer) return this.deliver({ ...answer, id: initialize.id });
    if (answer !== undefined && "result" in answer) {
      const message = `its answer to server/discover is not a DiscoverResult (no supportedVersions): ${JSON.stringify(answer.result).slice(0, 200)}`;
      return this.deliver({ jsonrpc: "2.0", id: initialize.id, error: { code: ErrorCode.InvalidRequest, message } });
    }
    throw new Error(`it did not answer server/discover; it may speak only MCP ${LATEST_PROTOCOL_VERSION} (set protocol = "auto" for it)`);
  }

  /**
   * Sends the client's initialize; true when the child refused it as a version it does not speak (-32022, a
   * 2026-07-28-only server), and then the client has been told nothing yet. Any other answer goes to the client
   * as it is read, before whatever the child sends after it.
   */
  private async refusesInitialize(initialize: JSONRPCRequest, options: TransportSendOptions | undefined): Promise<boolean> {
    this.version = LATEST_PROTOCOL_VERSION;
    const answered = new Promise<boolean>((resolve) => {
      this.wire.await(initialize.id, {
        deadline: Infinity,
        answered: (answer) => {
          const refused = "error" in answer && answer.error.code === MODERN_ERRORS.unsupportedVersion;
          if (!refused) this.wire.deliverNow(answer);
          resolve(refused);
        },
        timedOut: () => resolve(false),
        closed: () => resolve(false),
      });
    });
    try {
      await this.wire.link.send(initialize, options);
    } catch (error) {
      // The refusal is always an answer: only a stdio or legacy SSE child initializes before server/discover (an
      // HTTP child is asked server/discover first), so no refusal comes as an HTTP status.
      this.wire.drop(initialize.id);
      throw error;
    }
    const refused = await answered;
    if (refused) this.version = undefined;
    return refused;
  }

  /**
   * server/discover, asked once more when the child refused the version it then names as one it speaks: the
   * specification asks a client to retry with a version from that list, and gaggle's is on it.
   */
  private async discoverAgain(options: TransportSendOptions | undefined): Promise<Answer | undefined> {
    const first = await this.discover(options);
    const refusal = first !== undefined && "error" in first && first.error.code === MODERN_ERRORS.unsupportedVersion ? first.error : undefined;
    const supported = (refusal?.data as { supported?: unknown } | undefined)?.supported;
    return Array.isArray(supported) && supported.includes(MODERN_VERSION) ? this.discover(options) : first;
  }

  /** The child's answer to server/discover; undefined when it refused over HTTP, closed, or stayed silent. */
  private async discover(options: TransportSendOptions | undefined): Promise<Answer | undefined> {
    const answered = new Promise<Answer | undefined>((resolve) => {
      this.wire.await(PROBE_ID, {
        deadline: performance.now() + this.options.probeTimeoutMs,
        answered: (answer) => resolve(answer),
        timedOut: () => {
          this.probeFailed = "silent";
          resolve(undefined);
        },
        closed: () => {
          this.probeFailed = "closed";
          resolve(undefined);
        },
      });
    });
    this.probing = true;
    try {
      await this.wire.link.send({ jsonrpc: "2.0", id: PROBE_ID, method: "server/discover", params: this.enveloped(undefined) }, options);
      return await answered;
    } catch (error) {
      // A sign-in that is needed is needed whatever the era; initialize would only meet the same 401.
      if (error instanceof GaggleError) throw error;
      // Over HTTP a 2025 server refuses the sessionless POST (400, 404, 405): that is its answer.
      return undefined;
    } finally {
      // A probe that was refused keeps no entry that could later time out and be taken for silence.
      this.wire.drop(PROBE_ID);
      this.probing = false;
    }
  }

  /** Opens the listen stream for what the child announces; the client goes on meanwhile. */
  private listenTo(capabilities: Record<string, unknown>): void {
    const { listenChannel, envelope, probeTimeoutMs } = this.options;
    const channel = listenChannel ?? inBandChannel((message) => this.wire.link.send(message));
    const deliver = (message: JSONRPCMessage) => this.wire.deliverNow(message);
    this.listen = new ChildListen(channel, ChildListen.listsOf(capabilities), { envelope, deliver, ackTimeoutMs: probeTimeoutMs });
    void this.listen.start();
  }

  /**
   * resources/subscribe becomes the URI's place in the listen stream's filter. The child's acknowledgement
   * says whether it took it; one that did not is answered as a 2025 server without subscriptions answers.
   */
  private async subscription(message: JSONRPCRequest): Promise<void> {
    const uri = (message.params as { uri?: unknown } | undefined)?.uri;
    const listen = this.listen;
    if (typeof uri !== "string" || !listen) return this.refuse(message.id, `${message.method} needs a uri`);
    if (message.method === "resources/unsubscribe") {
      await listen.unsubscribe(uri);
      return this.reply(message.id, {});
    }
    if (await listen.subscribe(uri)) return this.reply(message.id, {});
    return this.refuse(message.id, `the server (MCP ${MODERN_VERSION}) did not take a subscription to ${uri} on its subscriptions/listen stream`);
  }

  private refuse(id: JSONRPCRequest["id"], message: string): Promise<void> {
    return this.deliver({ jsonrpc: "2.0", id, error: { code: ErrorCode.MethodNotFound, message } });
  }

  private legacy(initialize: JSONRPCRequest, options: TransportSendOptions | undefined): Promise<void> {
    this.version = LATEST_PROTOCOL_VERSION;
    return this.wire.link.send(initialize, options);
  }

  private reply(id: JSONRPCRequest["id"], result: Record<string, unknown>): Promise<void> {
    return this.deliver({ jsonrpc: "2.0", id, result });
  }

  private deliver(message: JSONRPCMessage): Promise<void> {
    this.wire.deliver(message);
    return Promise.resolve();
  }
}

/**
 * What the SDK client needs of an initialize result, made from a DiscoverResult. It names the 2025 revision
 * the client knows; the transport knows the child speaks 2026-07-28.
 */
function initializeResultOf(discover: Record<string, unknown>): Record<string, unknown> {
  const meta = isObject(discover._meta) ? discover._meta : {};
  const info = meta[META.serverInfo];
  return {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: isObject(discover.capabilities) ? discover.capabilities : {},
    serverInfo: isObject(info) && typeof info.name === "string" ? info : { name: "unknown", version: "0" },
    ...(typeof discover.instructions === "string" && { instructions: discover.instructions }),
  };
}
