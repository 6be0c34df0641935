// Serving: MCP over stdio (until stdin closes) or Streamable HTTP, until a signal; then every child is stopped.
import { realpathSync } from "node:fs";
import type { GaggleConfig } from "../config/index.js";
import { createGaggle, type Gaggle } from "../gateway/gaggle.js";
import { ModernServer } from "../gateway/modern/modern-server.js";
import { GatewayRequests } from "../gateway/requests.js";
import { createGatewayServer } from "../gateway/server.js";
import { ClientOutbox } from "../transport/client-outbox.js";
import { EraSplitTransport } from "../transport/era-split.js";
import { lazyLogger } from "../shared/log.js";
import { withStack } from "../shared/log-errors.js";
import type { HttpGateway } from "../transport/http-server.js";
import { createGaggleWithListener } from "../transport/members-listener.js";
import { StdioServerTransport } from "../transport/stdio-server.js";

export interface ListenAddress {
  host: string;
  port: number;
}

/** Bound on first use, after the log level is set. */
const log = lazyLogger({ subsystem: "serve" });

export async function serveStdio(config: GaggleConfig): Promise<void> {
  const { gaggle, members } = createGaggleWithListener(config);
  const session = "stdio";
  const { server, connect } = createGatewayServer(gaggle, session);
  const modern = new ModernServer(gaggle, new GatewayRequests(gaggle));
  const stop = stopOnce(
    gaggle,
    async () => {
      modern.endListens();
      await server.close();
    },
    () => members.close(),
  );
  process.stdin.on("end", () => void stop("stdin closed"));
  process.stdin.on("error", () => void stop("stdin error"));
  const outbox = new ClientOutbox(
    new StdioServerTransport(),
    {
      maxBytes: config.gateway.maxClientQueueBytes,
      session,
      onBacklog: (backlogged) => gaggle.hub.clientBacklog(session, backlogged),
    },
    process.stdout,
  );
  await connect(new EraSplitTransport(outbox, modern));
  log.info({ config: config.path, children: gaggle.router.names() }, "gaggle serving MCP on stdio");
  if (process.stdin.isTTY) process.stderr.write(forAPerson(config.path));
  gaggle.startEager();
}

export async function serveHttpUntilStopped(config: GaggleConfig, address: ListenAddress): Promise<void> {
  // Imported here: serving stdio never loads the HTTP server.
  const { serveHttp } = await import("../transport/http-server.js");
  // gaggle's own agents connect to the listener it serves, with their secret in place of the token.
  const gaggle = createGaggle(config, { memberBase: async () => (await listening).localBase });
  const token = config.gateway.authToken ?? process.env.GAGGLE_AUTH_TOKEN;
  const tokens = { ...(token && { auth_token: token }), ...config.gateway.authTokens };
  const listening: Promise<HttpGateway> = serveHttp(gaggle, { ...address, tokens });
  const http = await listening;
  stopOnce(gaggle, () => http.close());
  // stderr, so a script that starts gaggle on port 0 can read where it landed.
  process.stderr.write(`gaggle: serving MCP at ${http.url}\n`);
  log.info(
    { config: config.path, url: http.url, auth: Object.keys(tokens).length > 0 ? `bearer (${Object.keys(tokens).join(", ")})` : "none" },
    "gaggle serving MCP over Streamable HTTP",
  );
  gaggle.startEager();
}

/** Installs the signal handlers; the returned function stops clients, then children, then `closeLast`, then exits. */
function stopOnce(
  gaggle: Gaggle,
  closeClients: () => Promise<void>,
  closeLast: () => Promise<void> = async () => {},
): (reason: string, exitCode?: number) => Promise<void> {
  let stopping: Promise<void> | undefined;
  const stop = (reason: string, exitCode = 0) => {
    stopping ??= (async () => {
      log.info({ reason }, "shutting down");
      await closeClients().catch(() => {});
      await gaggle.close();
      await closeLast().catch(() => {});
      log.info("all children stopped");
      process.exit(exitCode);
    })();
    return stopping;
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void stop(signal));
  process.on("uncaughtException", (error) => {
    log.fatal({ err: withStack(error) }, "uncaught exception");
    void stop("uncaught exception", 1);
  });
  return stop;
}

/** `PORT`, `HOST:PORT` or `[V6]:PORT`; the host defaults to loopback. */
export function parseListenAddress(text: string): ListenAddress | undefined {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(text);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port > 65535) return undefined;
  return { host: (match[1] ?? "127.0.0.1").replace(/^\[(.*)\]$/, "$1"), port };
}

/** Said once when a person started gaggle at a terminal: stdio is for an MCP client, and how to give it one. */
function forAPerson(configPath: string): string {
  return (
    `gaggle: serving MCP on stdio with ${configPath}. An MCP client talks to it here (JSON-RPC, one message per ` +
    "line), so there is nothing to type; stop it with Ctrl-C.\n" +
    `  add it to a client:  claude mcp add gaggle -- node ${realpathSync(process.argv[1] ?? "gaggle")} --config ${configPath}\n` +
    "  or serve HTTP:       gaggle --http 127.0.0.1:8765 (then point the client at http://127.0.0.1:8765/mcp)\n"
  );
}
