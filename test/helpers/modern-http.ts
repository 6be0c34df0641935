// MCP 2026-07-28 requests sent raw over HTTP: the _meta envelope, the headers that mirror the body, and streamed answers read frame by frame.
import { request, type IncomingMessage } from "node:http";

export const MODERN = "2026-07-28";

/** A request's envelope; `overrides` replace or (as undefined) remove its keys. */
export function envelope(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "modern-http-test", version: "0.0.0" },
    ...overrides,
  };
  return Object.fromEntries(Object.entries(meta).filter(([, value]) => value !== undefined));
}

export interface ModernRequest {
  id?: number | string;
  method: string;
  params?: Record<string, unknown>;
  /** Replace the headers that would mirror the body (undefined removes one). */
  headers?: Record<string, string | undefined>;
}

/** The headers a modern client sends for this body. */
function mirrorHeaders(method: string, params: Record<string, unknown> | undefined, version: unknown): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": String(version ?? MODERN),
    "mcp-method": method,
  };
  const name = params?.name ?? params?.uri;
  if (typeof name === "string" && ["tools/call", "prompts/get", "resources/read"].includes(method)) headers["mcp-name"] = name;
  return headers;
}

/** One response, frame by frame: the JSON body as one frame, or each SSE event's data. */
export class ModernResponse {
  readonly frames: Array<Record<string, unknown>> = [];
  private waiters: Array<() => void> = [];
  private ended = false;
  readonly done: Promise<void>;

  constructor(
    readonly message: IncomingMessage,
    private readonly close: () => void,
  ) {
    let text = "";
    message.setEncoding("utf8");
    const sse = String(message.headers["content-type"] ?? "").startsWith("text/event-stream");
    message.on("data", (chunk: string) => {
      text += chunk;
      if (!sse) return;
      let at: number;
      while ((at = text.indexOf("\n\n")) >= 0) {
        const block = text.slice(0, at);
        text = text.slice(at + 2);
        const data = block
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trim())
          .join("\n");
        if (data) this.push(JSON.parse(data) as Record<string, unknown>);
      }
    });
    this.done = new Promise((resolve) =>
      message.on("end", () => {
        if (!sse && text) this.push(JSON.parse(text) as Record<string, unknown>);
        this.ended = true;
        this.wake();
        resolve();
      }),
    );
  }

  get status(): number {
    return this.message.statusCode ?? 0;
  }

  /** Resolves once `count` frames came (or the response ended first); rejects after `ms`. */
  async waitFor(count: number, ms = 10_000): Promise<Array<Record<string, unknown>>> {
    const deadline = Date.now() + ms;
    while (this.frames.length < count && !this.ended) {
      if (Date.now() > deadline) throw new Error(`only ${this.frames.length} of ${count} frames within ${ms} ms: ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100).unref();
      });
    }
    return this.frames.slice(0, count);
  }

  /** The whole answer: every frame, once the response ended. */
  async all(): Promise<Array<Record<string, unknown>>> {
    await this.done;
    return this.frames;
  }

  /** Closes the connection: the client's way to cancel a request in this era. */
  abort(): void {
    this.close();
  }

  private push(frame: Record<string, unknown>): void {
    this.frames.push(frame);
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * Sends one modern request to http://127.0.0.1:port/mcp and resolves as soon as its response begins. `signal`
 * closes the connection, before the response or during it.
 */
export function modernRequest(port: number, { id = 1, method, params, headers = {} }: ModernRequest, signal?: AbortSignal): Promise<ModernResponse> {
  const full = { ...params, _meta: (params?._meta as Record<string, unknown> | undefined) ?? envelope() };
  const version = (full._meta as Record<string, unknown>)["io.modelcontextprotocol/protocolVersion"];
  const body = JSON.stringify({ jsonrpc: "2.0", id, method, params: full });
  const merged = Object.entries({ ...mirrorHeaders(method, full, version), ...headers }).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/mcp", headers: Object.fromEntries(merged), agent: false }, (res) =>
      resolve(new ModernResponse(res, () => req.destroy())),
    );
    req.on("error", reject);
    signal?.addEventListener("abort", () => req.destroy(), { once: true });
    req.end(body);
  });
}

/** One modern request's whole answer: its status and its final JSON-RPC message. */
export async function modernCall(port: number, spec: ModernRequest): Promise<{ status: number; message: Record<string, unknown> }> {
  const response = await modernRequest(port, spec);
  const frames = await response.all();
  return { status: response.status, message: frames.at(-1)! };
}
