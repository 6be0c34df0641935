// The admin listener: the admin paths on an address of their own (gateway.admin, or the daemon's loopback port),
// behind the same Host, Origin and token checks as /mcp.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Gaggle } from "../../gateway/gaggle.js";
import type { Observatory } from "../../gateway/observe/observatory.js";
import type { StatusExtras, Viewer } from "../../gateway/observe/status-document.js";
import { StartupError } from "../../shared/errors.js";
import type { ListenAddress } from "../../shared/listen-address.js";
import { lazyLogger } from "../../shared/log.js";
import { withStack } from "../../shared/log-errors.js";
import { bracketed, HttpGuard, isLoopback, isWildcard, OpenAnswers } from "../http-guard.js";
import { AdminRoutes } from "./admin-routes.js";

const log = lazyLogger({ subsystem: "admin" });

export interface AdminOptions extends ListenAddress {
  /** Principal name -> bearer token, as for /mcp; required off loopback. */
  tokens: Record<string, string>;
  allowedHosts: string[];
  allowedOrigins: string[];
  extras: StatusExtras;
}

export interface AdminListener {
  /** The status page, e.g. http://127.0.0.1:7311/. */
  readonly url: string;
  readonly port: number;
  /**
   * Takes these bearer tokens from the next request on (a reload); a status stream whose token is gone is ended.
   * Refused, keeping the tokens in force, when they would leave a listener off loopback without any: answers why then.
   */
  useTokens(tokens: Record<string, string>): string | undefined;
  close(): Promise<void>;
}

/** Starts the admin listener; a daemon or a serving gaggle makes this one call. */
export async function serveAdmin(gaggle: Gaggle, observatory: Observatory, options: AdminOptions): Promise<AdminListener> {
  if (!isLoopback(options.host) && Object.keys(options.tokens).length === 0) {
    throw new StartupError(
      `refusing to serve the admin listener on ${options.host} without a bearer token: set gateway.auth_tokens (or gateway.auth_token), or give gateway.admin a loopback address such as "127.0.0.1:${options.port}"`,
    );
  }
  const routes = new AdminRoutes(gaggle, observatory, options.extras);
  let guard: HttpGuard | undefined;
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.error({ err: withStack(error) }, "admin request failed");
      if (res.headersSent) return void res.end();
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: (error as Error).message }));
    });
  });
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? "/", "http://gaggle").pathname;
    if (!routes.handles(path)) return refuse(res, 404, `no such path ${path}; the status page is at /`);
    if (routes.isOpen(path)) return routes.serve(req, res, path, { principal: "", everything: false });
    const checked = guard!.check(req, routes.needsToken(path));
    if ("status" in checked) return refuse(res, checked.status, checked.message, checked.challenge);
    viewers.add(res, checked.principal);
    return routes.serve(req, res, path, viewerOf(checked.principal, guard!.open));
  };
  const viewers = new OpenAnswers();

  await new Promise<void>((resolve, reject) => {
    http.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new StartupError(
              `cannot serve the admin listener on ${bracketed(options.host)}:${options.port}: the port is in use; give gateway.admin another port (0 picks a free one)`,
            )
          : error,
      ),
    );
    http.listen(options.port, options.host, () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  guard = new HttpGuard({ ...options, port });
  const host = isWildcard(options.host) ? "127.0.0.1" : bracketed(options.host);
  return {
    url: `http://${host}:${port}/`,
    port,
    useTokens: (tokens) => {
      const problem = guard!.useTokens(tokens);
      if (problem === undefined) viewers.end((principal) => !guard!.admits(principal));
      return problem;
    },
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** With tokens each principal sees its own; without (`open`), the listener serves one person, who sees everything. */
export function viewerOf(principal: string, open: boolean): Viewer {
  return { principal, everything: open };
}

/** `challenge`: a 401's WWW-Authenticate. */
function refuse(res: ServerResponse, status: number, message: string, challenge?: string): void {
  res
    .writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...(challenge && { "www-authenticate": challenge }) })
    .end(JSON.stringify({ error: message }));
}
