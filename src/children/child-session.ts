// One session with a real child: its transport, its SDK client, and the wiring of what the child sends back.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  type LoggingLevel,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ChildConfig } from "../config/index.js";
import { startTimeoutReason } from "./calls/slow-start.js";
import { errorChain, errorMessage, WireError } from "../shared/errors.js";
import type { Logger } from "../shared/log.js";
import { META, MODERN_VERSION } from "../shared/modern-protocol.js";
import { GAGGLE_NAME, GAGGLE_VERSION } from "../shared/version.js";
import type { ChildEvents } from "./switchboard.js";
import { childEnv } from "./processes/child-env.js";
import type { ChildEra } from "./wire/child-era.js";
import { ChildWire } from "./wire/child-wire.js";
import type { ChildOAuthProvider } from "./oauth/provider.js";
import { TokenStore } from "./oauth/token-store.js";
import type * as RemoteKitModule from "./wire/remote-kit.js";
import type { CatalogShelf } from "./catalog.js";
import { CHANGED_WITH, type CloseReason } from "./child.js";
import { SchemaCache } from "./schema-cache.js";
import type { StderrRing } from "./processes/stderr-ring.js";
import type { StdoutNoise } from "./processes/stdout-noise.js";
import { NoiseLog } from "./wire/noise-log.js";
import { OutputHold } from "./wire/output-hold.js";
import { isStartTimeout } from "./calls/slow-start.js";
import { ProcessLink, type ProcessExit } from "./wire/process-link.js";
import { TransportLink, type Link } from "../shared/link.js";
import { AnyResultSchema, type CallerTracker } from "./wire/caller-tracker.js";

/** One live connection to the child; replaced as a whole when the child restarts. */
export interface Session {
  client: Client;
  /** Forwarded requests go through `wire.forward`; the session's own requests through `client`, whose transport it is. */
  wire: ChildWire;
  /** The era the child speaks (the wire's). */
  era: ChildEra;
  /** The process behind a stdio child; undefined for remote children. */
  process: ProcessLink | undefined;
  /** Holds what the child sends while a client it serves is not reading; told to read again when that may have changed. */
  hold: OutputHold;
  cache: SchemaCache;
  /** Set when gaggle ends the session on purpose; a call that fails after that failed because of it. */
  closing: boolean;
  /** Why gaggle ended it, when a caller said (see Child.close). */
  closedBecause: CloseReason | undefined;
  /** Why the session ended ("exited (code 3)"), once it has. */
  endedBecause: string | undefined;
  /** The catalog held the child's tool list when the session began. */
  catalogued: boolean;
  /** What a remote session's transport and errors need; undefined for a stdio child. */
  remote: RemoteKit | undefined;
  /** Where this session's stderr begins in the child's ring (StderrRing.mark): its failures show its own lines. */
  stderrFrom: number;
}

export type RemoteKit = typeof RemoteKitModule;
let remoteKit: Promise<RemoteKit> | undefined;

/** Loads what remote children need, once, when the first of them starts a session. */
export function loadRemoteKit(): Promise<RemoteKit> {
  return (remoteKit ??= import("./wire/remote-kit.js"));
}

/** What a session reports to, and reads from, the child that owns it. */
export interface SessionWiring {
  config: ChildConfig;
  shutdownGraceMs: number;
  /** PROBE_TIMEOUT_MS unless given (see SessionParts). */
  probeTimeoutMs?: number;
  stateDir: string;
  stderr: StderrRing;
  stdoutNoise: StdoutNoise;
  log: Logger;
  events: ChildEvents;
  callers: CallerTracker;
  /** The session's connection closed, on purpose or not; `endedBecause` is set by then. */
  onClosed(session: Session): void;
  /** A remote session's transport reported that the session is over (see connectionLost). */
  onLost(session: Session, error: unknown): void;
  /** A response stream of a remote session broke (see streamBroken): the server may or may not be there. */
  onStreamBroken(session: Session): void;
  /** Where the child's lists are kept for its next run; every list fetched whole is recorded there. */
  catalog: CatalogShelf;
  /** What a remote child's session needs (see loadRemoteKit); undefined for a stdio child. */
  remote: RemoteKit | undefined;
  /** True while a client the child serves is not reading what gaggle sends it: the child's output is not read meanwhile. */
  outputHeld(): boolean;
}

/** What gaggle declares to every child: it forwards each of these to the client whose call the child is serving. */
const CLIENT_CAPABILITIES = { sampling: {}, elicitation: {}, roots: { listChanged: true } };

/** A stdio child silent this long on server/discover is taken for a 2025 server (and initialized first from then on). */
const PROBE_TIMEOUT_MS = 5000;

/** What gaggle's own requests to a 2026-07-28 child say of gaggle; a client's requests carry that client's. */
function gaggleEnvelope(): Record<string, unknown> {
  return {
    [META.protocolVersion]: MODERN_VERSION,
    [META.clientCapabilities]: CLIENT_CAPABILITIES,
    [META.clientInfo]: { name: GAGGLE_NAME, version: GAGGLE_VERSION },
  };
}

/** Builds a session, wired but not yet connected: handlers must be in place before the first message arrives. */
export function createSession(wiring: SessionWiring): Session {
  const { config, events, callers, log, remote } = wiring;
  const hold = new OutputHold({
    held: wiring.outputHeld,
    onHold: (held) =>
      held
        ? log.info("a client this child serves is not reading what it was sent; the child's output waits unread until it does")
        : log.info("the client reads again; reading the child's output again"),
  });
  // A remote child's sign-in serves its session's transport and its listen streams alike.
  const signIn = remote && new remote.ChildOAuthProvider(config, config.oauth, new TokenStore(wiring.stateDir, config.name, config.url!));
  const noise = new NoiseLog(log, "protocol errors from the child");
  const link = createLink(wiring, { hold, noise }, remote && signIn && { kit: remote, signIn }, (name) =>
    session.cache.cachedTools?.find((tool) => tool.name === name),
  );
  const httpSignIn = config.transport === "http" && signIn;
  const era = {
    choice: config.protocol,
    // The legacy SSE transport belongs to the 2025 era: it is initialized first.
    discoverFirst: config.transport === "http" || (config.transport === "stdio" && !wiring.catalog.initializeFirst),
    envelope: gaggleEnvelope,
    probeTimeoutMs: wiring.probeTimeoutMs ?? PROBE_TIMEOUT_MS,
    ...(remote && httpSignIn && { listenChannel: remote.httpListenChannel(config.url!, config.headers, httpSignIn) }),
  };
  const wire = new ChildWire(link, era, {
    closed: () => {
      hold.end();
      noise.summarise();
      const exit = session.process?.exitInfo;
      session.endedBecause ??= exit ? describeExit(exit) : "closed its connection";
      wiring.onClosed(session);
    },
  });
  const client = new Client({ name: GAGGLE_NAME, version: GAGGLE_VERSION }, { capabilities: CLIENT_CAPABILITIES });
  const session: Session = {
    client,
    wire,
    era: wire.era,
    process: link instanceof ProcessLink ? link : undefined,
    hold,
    closing: false,
    closedBecause: undefined,
    endedBecause: undefined,
    catalogued: wiring.catalog.read().tools !== undefined,
    remote,
    stderrFrom: wiring.stderr.mark(),
    cache: new SchemaCache(
      client,
      { timeout: config.timeoutMs },
      (kind) => {
        log.debug({ kind }, "list changed; cache dropped");
        events.listChanged(config.name, kind);
      },
      // A list unlike the one the catalog kept (which a client may have been shown) is announced as changed.
      (kind, items) => wiring.catalog.record(kind, items) && events.listChanged(config.name, CHANGED_WITH[kind]),
    ),
  };
  // Sampling, elicitation and roots requests from the child go to the client whose call it is serving.
  for (const schema of [CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema]) {
    client.setRequestHandler(schema, async (request, extra) => {
      const caller = callers.target();
      if (!caller) throw new WireError(ErrorCode.InvalidRequest, `no client is using this server, so ${request.method} has nowhere to go`);
      const answer = await caller.forward(request, extra.signal);
      return AnyResultSchema.parse(answer) as never;
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => events.log(config.name, note.params, callers.active()));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => events.resourceUpdated(config.name, note.params.uri));
  client.onerror = (error) => {
    // Closing a remote session aborts its stream; that is the close itself, not a fault worth a warning.
    if (session.closing || session.endedBecause !== undefined) return;
    noise.note(error);
    if (remote?.connectionLost(error)) wiring.onLost(session, error);
    else if (remote?.streamBroken(error)) wiring.onStreamBroken(session);
  };
  return session;
}

/**
 * Connects a new session. A stdio child that stayed silent on, or ended at, the server/discover probe is taken
 * for a 2025 server that takes nothing before initialize: the catalog keeps that, so its later starts
 * initialize first, and one that ended at the probe is started again at once to be initialized (once only: a
 * child that ends at every start is not started twice each time).
 */
export async function connectSession(newSession: () => Session, catalog: CatalogShelf, timeoutMs: number, log: Logger): Promise<Session> {
  const session = newSession();
  const connect = (opened: Session) => opened.client.connect(opened.wire, { timeout: timeoutMs });
  const learned = session.process !== undefined && !catalog.initializeFirst;
  try {
    await connect(session);
  } catch (error) {
    if (!learned || session.era.probeFailed !== "closed" || session.closing) throw error;
    catalog.markInitializeFirst();
    await session.wire.close().catch(() => {});
    log.info("the child ended when asked server/discover before initialize; started again to be initialized first");
    const again = newSession();
    await connect(again);
    return again;
  }
  if (learned && session.era.probeFailed !== undefined) catalog.markInitializeFirst();
  return session;
}

/** Ends a session still being started, at once: its start fails now instead of running to its timeout. */
export function abandonStart(session: Session): void {
  session.closing = true;
  void session.wire.close().catch(() => {});
}

/** Ends a session gaggle no longer needs: a remote one is told so first (Streamable HTTP's DELETE), within `graceMs`. */
export async function closeSession(session: Session, graceMs: number, why?: CloseReason): Promise<void> {
  session.closing = true;
  session.closedBecause = why;
  await session.remote?.terminateRemoteSession(session.wire.link, graceMs);
  await session.client.close();
}

/** A new session of a restarted child gets the log level and subscriptions the old one had, each asked within `timeoutMs`. */
export async function restoreSessionState(
  session: Session,
  logLevel: LoggingLevel | undefined,
  subscriptions: ReadonlySet<string>,
  log: Logger,
  timeoutMs: number,
): Promise<void> {
  const { client } = session;
  // The tool list a catalog kept may be out of date: it is fetched again, and a change is announced (see the cache).
  if (session.catalogued) void session.cache.tools().catch(() => {});
  try {
    if (logLevel && client.getServerCapabilities()?.logging) await client.setLoggingLevel(logLevel, { timeout: timeoutMs });
    for (const uri of subscriptions) await client.subscribeResource({ uri }, { timeout: timeoutMs });
  } catch (error) {
    log.warn({ err: error }, "could not restore log level or subscriptions on the new session");
  }
}

function describeExit(exit: ProcessExit): string {
  return `exited (${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`})`;
}

/**
 * An exit of the process says most; otherwise the transport's own error, with its HTTP status if it has one.
 * `session` is undefined when none could be made.
 */
export function startFailureReason(error: unknown, session: Session | undefined, startupTimeoutMs: number): string {
  // A spawn failure's message already says what its cause does; a remote one's cause is where the reason is.
  const message = session?.process ? errorMessage(error) : errorChain(error);
  if (isStartTimeout(error)) {
    return startTimeoutReason(startupTimeoutMs);
  }
  // The child's own refusal (an unsupported version, say) says more than the exit that followed it.
  if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) return `refused to start the session: ${message}`;
  const exit = session?.process?.exitInfo;
  if (exit) return describeExit(exit);
  // The legacy SSE transport's error quotes its event's message, which names the status already.
  const { code: status, event } = error as { code?: unknown; event?: unknown };
  return typeof status === "number" && status >= 400 && event === undefined ? `${oneLine(message)} (HTTP ${status})` : oneLine(message);
}

/** The most of an HTTP error's body the reason carries. */
const REASON_MAX_CHARS = 300;

/**
 * `text` on one line, cut at REASON_MAX_CHARS: the SDK's HTTP errors end with the body the server answered, line
 * breaks and all, and a reason is one line.
 */
function oneLine(text: string): string {
  const line = text.split(/\s+/).filter(Boolean).join(" ");
  return line.length > REASON_MAX_CHARS ? `${line.slice(0, REASON_MAX_CHARS)}…` : line;
}

/** `remote` is there for a remote child. */
function createLink(
  { config, shutdownGraceMs, stderr, stdoutNoise, log }: SessionWiring,
  { hold, noise }: { hold: OutputHold; noise: NoiseLog },
  remote: { kit: RemoteKit; signIn: ChildOAuthProvider } | undefined,
  toolFor: (name: string) => Tool | undefined,
): Link {
  if (remote) {
    const options = { headers: config.headers, toolFor, authProvider: remote.signIn, hold };
    return new TransportLink(remote.kit.remoteTransport(config.transport as "http" | "sse", config.url!, options));
  }
  return new ProcessLink({
    command: config.command!,
    args: config.args,
    cwd: config.cwd,
    env: childEnv(config.env, config.inheritEnv),
    graceMs: shutdownGraceMs,
    onStderr: (chunk) => {
      for (const line of stderr.push(chunk)) log.debug({ stream: "stderr" }, line);
    },
    onStdoutGarbage: (line, error) => {
      const reason = error instanceof Error ? error.message : String(error);
      stdoutNoise.note(reason, line);
      noise.note(new Error(reason), "child wrote a line to stdout that is not JSON-RPC; ignored", { line: line.slice(0, 200) });
    },
    hold,
  });
}

/** How long a remote server whose stream broke gets to answer a ping before its session is given up. */
const PING_TIMEOUT_MS = 10_000;

/** Asks the server of `session` whether it is still there; `onGone` when it does not answer or cannot be reached. */
export function pingOrLose(session: Session, timeoutMs: number, onGone: (error: unknown) => void): void {
  session.client.ping({ timeout: Math.min(timeoutMs, PING_TIMEOUT_MS) }).catch((error: unknown) => {
    const gone = !(error instanceof McpError) || error.code === ErrorCode.RequestTimeout || error.code === ErrorCode.ConnectionClosed;
    if (gone) onGone(error);
  });
}
