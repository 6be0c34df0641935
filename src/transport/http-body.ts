// Reads a request body, refusing one larger than the configured limit before it is all in memory.
import type { IncomingMessage } from "node:http";

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
    const onEnd = () => resolve(Buffer.concat(chunks).toString("utf8"));
    req.on("data", onData).on("end", onEnd).on("error", reject);
  });
}

/** How long a refused body may go on arriving after its answer is out before the connection is cut. */
const LINGER_MS = 5_000;

/**
 * Closes the connection of a request whose body was refused, after its answer, without a reset: the write side is
 * ended and what the client still sends is read and dropped until it closes its end, or LINGER_MS pass. A socket
 * closed with body unread resets, and the reset can discard the answer before the client reads it: Node's fetch
 * sends the whole body before it reads the answer, and got ECONNRESET instead of the 413. (RFC 9112 9.6 asks
 * for this staged close.) The answer carries no `Connection: close`: with it, Node destroys the socket as soon as
 * the answer is written, the reset this avoids.
 */
export function closeAfterAnswer(req: IncomingMessage): void {
  const socket = req.socket;
  const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once("close", () => clearTimeout(cut));
  socket.end();
}
