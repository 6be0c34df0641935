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
 * The body's text. Past the limit the rest of the body is read and dropped rather than the socket destroyed, so
 * that the 413 answer still reaches the client; the server closes the connection once it is sent.
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
