// Serving: MCP over stdio (until stdin closes) or Streamable HTTP, until a signal; then every child is stopped.
import { realpathSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { isatty } from "node:tty";
import { closeQuickly } from "../children/processes/group-process.js";
import { bearerTokens, type ConfigError, type GaggleConfig } from "../config/index.js";
import { createGaggle, type Gaggle, type GatewayKey } from "../gateway/gaggle.js";
import { ModernServer } from "../gateway/modern/modern-server.js";
import { GatewayRequests } from "../gateway/requests.js";
import { createGatewayServer } from "../gateway/server.js";
import { LOCAL_PRINCIPAL } from "../children/child.js";
import { ClientConnection } from "../transport/client-connection.js";
import { flushLog, lazyLogger } from "../shared/log.js";
import { withStack } from "../shared/log-errors.js";
import type { ListenAddress } from "../shared/listen-address.js";
import { tracesWanted } from "../config/observe.js";
import type { Observatory } from "../gateway/observe/observatory.js";
import type { StatusExtras } from "../gateway/observe/status-document.js";
import type { AdminListener } from "../transport/admin/admin-listener.js";
import type { HttpGateway } from "../transport/http-server.js";
import { createGaggleWithListener } from "../transport/members-listener.js";
import { StdioLink } from "../transport/stdio-link.js";
import { ConfigStanding, Reloader } from "./reload.js";

/** Bound on first use, after the log level is set. */
const log = lazyLogger({ subsystem: "serve" });

/** How the command line serves a config. */
export interface ServeOptions {
  /** The log level was given on the command line; a reloaded config's does not replace it. */
  fixedLevel?: boolean;
  /** The config file did not load at start: gaggle serves an empty config, says why, and applies the file once fixed. */
  problem?: ConfigError | undefined;
}

export async function serveStdio(config: GaggleConfig, options: ServeOptions = {}): Promise<void> {
  const admin = config.gateway.admin || undefined;
  // Nothing observing, nothing loaded: a call costs what it costs without any of it.
  const observatory = admin || watched(config) ? await openObservatory(config, admin !== undefined) : undefined;
  const standing = new ConfigStanding(options.problem);
  const { gaggle, members } = createGaggleWithListener(config, observatory, () => standing.errors());
  observatory?.attach(gaggle);
  const reloader = follow(gaggle, standing, options, "stdio");
  const listener = admin && observatory ? await startAdmin(gaggle, observatory, admin, statusExtras(standing)) : undefined;
  const session = "stdio";
  const modern = new ModernServer(gaggle, new GatewayRequests(gaggle));
  const link = new StdioLink({
    maxBytes: config.gateway.maxClientQueueBytes,
    session,
    onBacklog: (backlogged) => gaggle.hub.clientBacklog(session, backlogged),
  });
  const connection = new ClientConnection(link, {
    session: createGatewayServer(gaggle, session),
    modern: { server: modern, who: { principal: LOCAL_PRINCIPAL }, every: false },
  });
  const stop = stopOnce(
    gaggle,
    async () => {
      reloader.close();
      modern.endListens();
      await connection.close();
      await listener?.close();
    },
    async () => {
      await members.close();
      await observatory?.close();
    },
  );
  void link.inputEnded.then((why) => stop(why));
  await connection.open();
  log.info({ config: config.path, children: gaggle.router.names() }, "gaggle serving MCP on stdio");
  // Asked of the descriptor: process.stdin made now would open a second handle on the fd the link reads (EEXIST).
  if (isatty(0)) process.stderr.write(forAPerson(config.path));
  gaggle.startEager();
}

export async function serveHttpUntilStopped(config: GaggleConfig, address: ListenAddress, options: ServeOptions = {}): Promise<void> {
  // Imported here: serving stdio never loads the HTTP server.
  const { serveHttp } = await import("../transport/http-server.js");
  const { isLoopback } = await import("../transport/http-guard.js");
  // The admin paths are served beside /mcp, so their metrics are always kept.
  const observatory = await openObservatory(config, true);
  // gaggle's own agents connect to the listener it serves, with their secret in place of the token.
  const standing = new ConfigStanding(options.problem);
  const adminAddress = config.gateway.admin || undefined;
  let adminListening: Promise<AdminListener> | undefined;
  const gaggle = createGaggle(config, {
    memberBase: async () => (await listening).localBase,
    observer: observatory,
    configErrors: () => standing.errors(),
    tokensRequiredOn: [address.host, adminAddress?.host].find((host) => host !== undefined && !isLoopback(host)),
    // Read when each listener is up, so that one still starting takes the tokens of the config in force by then.
    inForce: () => {
      void listening.then((listener) => useTokens(listener, "/mcp", gaggle.config));
      void adminListening?.then((listener) => useTokens(listener, "admin", gaggle.config));
    },
  });
  observatory.attach(gaggle);
  const { AdminRoutes } = await import("../transport/admin/admin-routes.js");
  const reloader = follow(gaggle, standing, options, "http");
  const extras = statusExtras(standing);
  const admin = new AdminRoutes(gaggle, observatory, extras);
  const tokens = bearerTokens(gaggle.config);
  const listening: Promise<HttpGateway> = serveHttp(gaggle, { ...address, tokens, admin });
  const http = await listening;
  adminListening = adminAddress ? startAdmin(gaggle, observatory, adminAddress, extras) : undefined;
  const adminListener = await adminListening;
  stopOnce(
    gaggle,
    async () => {
      reloader.close();
      await http.close();
      await adminListener?.close();
    },
    () => observatory.close(),
  );
  // stderr, so a script that starts gaggle on port 0 can read where it landed.
  process.stderr.write(`gaggle: serving MCP at ${http.url}\n`);
  log.info({ config: config.path, url: http.url, auth: authOf(tokens) }, "gaggle serving MCP over Streamable HTTP");
  gaggle.startEager();
}

/** A listener takes the bearer tokens of the config in force, or says why it keeps its own. */
function useTokens(listener: HttpGateway | AdminListener, name: string, config: GaggleConfig): void {
  const tokens = bearerTokens(config);
  const problem = listener.useTokens(tokens);
  if (problem) log.error({ listener: name }, `the ${name} listener keeps the bearer tokens in force: ${problem}`);
  else log.debug({ listener: name, auth: authOf(tokens) }, "bearer tokens follow the config");
}

/** The names of the tokens a listener takes, for the log: never a token. */
function authOf(tokens: Record<string, string>): string {
  return Object.keys(tokens).length > 0 ? `bearer (${Object.keys(tokens).join(", ")})` : "none";
}

/** An audit log or traces: something observes gaggle even without an admin listener. */
function watched(config: GaggleConfig): boolean {
  return config.audit.path !== undefined || tracesWanted(config.telemetry, process.env);
}

export async function openObservatory(config: GaggleConfig, metrics: boolean): Promise<Observatory> {
  // Imported here: a gaggle nothing observes never loads it.
  const { openObservatory } = await import("../gateway/observe/observatory.js");
  return openObservatory(config, { metrics, env: process.env });
}

/** What the status page shows besides the gateway: when this gaggle started, and an edit of its config that did not load. */
export function statusExtras(standing: ConfigStanding): StatusExtras {
  const startedAt = new Date();
  return { startedAt, configErrors: () => standing.errors(), configErrorPlaces: () => standing.places() };
}

/** How each way of serving is started again, for the settings a running gaggle cannot follow. */
export const RESTART = {
  daemon: "gaggle stop, then reconnect",
  http: "stop this gaggle --http and run it again",
  stdio: "reconnect the client, which starts gaggle again",
} as const;

/**
 * The gateway keys each way of serving applies in place, besides those every running gaggle follows: the first
 * config that loads after a start on a file that did not brings them (see Reloader.inPlace). The daemon's idle
 * timer follows, and its socket's next connections take the client queue bound; listeners are never reopened.
 */
const IN_PLACE = {
  daemon: ["shutdownGraceMs", "daemonIdleMs", "maxClientQueueBytes"],
  http: ["shutdownGraceMs"],
  stdio: ["shutdownGraceMs"],
} as const satisfies Record<keyof typeof RESTART, readonly GatewayKey[]>;

/** The gaggle follows its config file, and reads it again on SIGHUP; `mode` is how it serves. */
export function follow(
  gaggle: Gaggle,
  standing: ConfigStanding,
  options: ServeOptions,
  mode: keyof typeof RESTART,
  followed?: (text: string) => void,
): Reloader {
  const reloader = new Reloader(gaggle, standing, { fixedLevel: options.fixedLevel, followed, restart: RESTART[mode], inPlace: IN_PLACE[mode] });
  // Said once more now that the log goes where it will stay (the daemon's file).
  if (options.problem)
    log.error({ file: options.problem.file }, `the config file does not load; gaggle serves no children until it does:\n${options.problem.message}`);
  process.on("SIGHUP", () => void reloader.reread());
  return reloader;
}

/** `tokens`: the bearer tokens it takes, the config's by default. */
export async function startAdmin(
  gaggle: Gaggle,
  observatory: Observatory,
  address: ListenAddress,
  extras: StatusExtras,
  tokens: Record<string, string> = bearerTokens(gaggle.config),
): Promise<AdminListener> {
  const { serveAdmin } = await import("../transport/admin/admin-listener.js");
  const { allowedHosts, allowedOrigins } = gaggle.config.gateway;
  const listener = await serveAdmin(gaggle, observatory, { ...address, tokens, allowedHosts, allowedOrigins, extras });
  // stderr, so a script that starts gaggle with an admin port of 0 can read where it landed.
  process.stderr.write(`gaggle: status page at ${listener.url}\n`);
  log.info({ url: listener.url }, "admin listener serving the status page, /api/status, /metrics, /healthz and /readyz");
  return listener;
}

/**
 * How long gaggle gives its children to stop once it is told to exit. Claude Code sends SIGTERM 100 ms after
 * SIGINT and SIGKILL 400 ms after that: gaggle exits first, having signalled every child, and the watchdog stops
 * any child still running after it (SIGTERM, then SIGKILL after shutdown_grace_ms).
 */
const EXIT_WITHIN_MS = 250;

/**
 * Installs the signal handlers; the returned function stops clients, then children (at most EXIT_WITHIN_MS), then
 * `closeLast`, which it waits for, then exits.
 */
export function stopOnce(
  gaggle: Gaggle,
  closeClients: () => Promise<void>,
  closeLast: () => Promise<void> = async () => {},
): (reason: string, exitCode?: number) => Promise<void> {
  let stopping: Promise<void> | undefined;
  const stop = (reason: string, exitCode = 0) => {
    stopping ??= (async () => {
      log.info({ reason }, "shutting down");
      closeQuickly();
      const stopped = (async () => {
        await closeClients().catch(() => {});
        await gaggle.close();
        return true;
      })();
      // A timer that holds the process: the exit below is the only way out.
      const inTime = await Promise.race([stopped, delay(EXIT_WITHIN_MS, false)]);
      if (inTime) log.info("all children stopped");
      else log.info({ withinMs: EXIT_WITHIN_MS }, "exiting with children still stopping: the watchdog stops them");
      // What gaggle keeps (the audit log, traces, its own log) is written out whole before it exits.
      await closeLast().catch(() => {});
      flushLog();
      process.exit(exitCode);
    })();
    return stopping;
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void stop(signal));
  process.on("uncaughtException", (error) => {
    log.fatal({ err: withStack(error) }, "uncaught exception");
    void stop("uncaught exception", 1);
  });
  return stop;
}

/** Said once when a person started gaggle at a terminal: stdio is for an MCP client, and how to give it one. */
function forAPerson(configPath: string): string {
  // The program as this process runs it: `gaggle` need not be on PATH (a checkout runs dist/cli.js).
  const self = `node ${realpathSync(process.argv[1] ?? "gaggle")} --config ${configPath}`;
  return (
    `gaggle: serving MCP on stdio with ${configPath}. An MCP client talks to it here (JSON-RPC, one message per ` +
    "line), so there is nothing to type; stop it with Ctrl-C.\n" +
    `  add it to a client:  claude mcp add gaggle -- ${self}\n` +
    `  or serve HTTP:       ${self} --http 127.0.0.1:8765 (then point the client at http://127.0.0.1:8765/mcp)\n`
  );
}
