// Reads a request body, refusing one larger than the configured limit before it is all in memory.
import type { IncomingMessage, ServerResponse } from "node:http";

export class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The body's text. A body the Content-Length says is over the limit is refused before any of it is read, one that
 * grows past it once it does; the rest is read and dropped rather than the socket destroyed, so that the 413 answer
 * still reaches the client, and closeAfterAnswer closes the connection once it is sent.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) {
    req.resume();
    return Promise.reject(new BodyError(413, `request body of ${declared} bytes is over the limit of ${limit} (gateway.max_body_bytes)`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off("data", onData).off("end", onEnd);
      req.resume();
      reject(new BodyError(413, `request body is over the limit of ${limit} bytes (gateway.max_body_bytes)`));
    };
    const onEnd = () => resolve((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8"));
    req.on("data", onData).on("end", onEnd).on("error", reject);
  });
}

/** How long a refused body may go on arriving after its answer is out before the connection is cut. */
const LINGER_MS = 5_000;

/**
 * Makes the answer to a refused body the connection's last (`Connection: close`, as RFC 9112 9.6 asks of a server
 * that will close), and the close after it a staged one: once the answer is out the write side is ended, and what
 * the client still sends is read and dropped until it closes its end, or LINGER_MS pass. Call it before the answer
 * is written.
 *
 * Node's http server closes a connection whose answer is its last (the answer says `Connection: close`, or the
 * request did) with socket.destroySoon(): end, then destroy as soon as the write side is done. A socket closed with
 * body unread resets, and the reset takes the answer with it: a client that sends the whole body before it reads
 * (Node's fetch, node:http with agent: false, curl with `Connection: close`) got EPIPE or ECONNRESET instead of the
 * 413. So on this socket destroySoon lingers instead, as nginx's lingering_close does.
 */
export function closeAfterAnswer(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  res.setHeader("connection", "close");
  socket.destroySoon = () => {
    const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once("close", () => clearTimeout(cut));
    socket.end();
  };
}
