// The daemon's local socket: each connection is one relayed stdio client, served as gaggle serves its own stdin.
import { chmodSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { LOCAL_PRINCIPAL } from "../children/child.js";
import type { Gaggle } from "../gateway/gaggle.js";
import type { ModernServer } from "../gateway/modern/modern-server.js";
import { createGatewayServer } from "../gateway/server.js";
import { lazyLogger } from "../shared/log.js";
import { ClientConnection } from "./client-connection.js";
import { StdioLink } from "./stdio-link.js";

const log = lazyLogger({ subsystem: "socket" });

export interface SocketListener {
  /** Connections open now. */
  readonly clients: number;
  /** Stops taking connections and ends the open ones; the socket file is the caller's to remove. */
  close(): Promise<void>;
}

/**
 * Every connection speaks for the user who started the daemon (its principal is "local", as on stdio): the socket
 * is made with mode 0600 in a folder of mode 0700, so no one else can open it. `onClients` hears the count of open
 * connections each time it changes.
 */
export async function serveSocket(gaggle: Gaggle, modern: ModernServer, path: string, onClients: (count: number) => void): Promise<SocketListener> {
  const open = new Set<{ socket: Socket; connection: ClientConnection }>();
  let next = 0;
  const server: Server = createServer((socket) => {
    const session = `relay-${++next}`;
    const link = new StdioLink(
      { maxBytes: gaggle.config.gateway.maxClientQueueBytes, session, onBacklog: (backlogged) => gaggle.hub.clientBacklog(session, backlogged) },
      socket,
      socket,
    );
    const connection = new ClientConnection(link, {
      session: createGatewayServer(gaggle, session),
      modern: { server: modern, who: { principal: LOCAL_PRINCIPAL }, every: false },
    });
    const entry = { socket, connection };
    open.add(entry);
    onClients(open.size);
    socket.on("error", (error) => log.debug({ session, err: error }, "client socket error"));
    socket.once("close", () => {
      open.delete(entry);
      void connection.close();
      onClients(open.size);
    });
    connection.open().then(
      () => log.info({ session }, "client connected"),
      (error: unknown) => {
        log.warn({ session, err: error }, "could not serve a client");
        socket.destroy();
      },
    );
  });
  // eslint-disable-next-line no-restricted-syntax -- synchronous: the socket is made once, as the daemon starts to listen, before it serves anyone.
  rmSync(path, { force: true });
  // The socket file takes its mode from the umask when it is made: none but the user may ever open it.
  const umask = process.umask(0o077);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
  } finally {
    process.umask(umask);
  }
  // eslint-disable-next-line no-restricted-syntax -- synchronous: as above, once at start-up; no connection is accepted before it is done.
  chmodSync(path, 0o600);
  return {
    get clients() {
      return open.size;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const { socket, connection } of open) {
        await connection.close().catch(() => {});
        socket.destroy();
      }
      await closed;
    },
  };
}
