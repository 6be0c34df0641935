// Reads a request body as JSON, refusing one larger than the configured limit before it is all in memory.
import type { IncomingMessage } from "node:http";

export class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) throw new BodyError(413, `request body of ${declared} bytes is over the limit of ${limit} (gateway.max_body_bytes)`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.destroy();
      throw new BodyError(413, `request body is over the limit of ${limit} bytes (gateway.max_body_bytes)`);
    }
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch (error) {
    throw new BodyError(400, `request body is not valid JSON: ${(error as Error).message}`);
  }
}
