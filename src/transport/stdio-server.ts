// gaggle's own end of an MCP client's stdio: messages in on stdin, out on stdout, one per line.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Readable, Writable } from "node:stream";
import { UnreadableMessageError } from "../shared/errors.js";
import { decodeErrorLine, encodeMessage, messageLines } from "../shared/json-rpc-codec.js";

/**
 * A line that is not a JSON-RPC message is answered with JSON-RPC's parse error (-32700) or invalid request
 * (-32600), carrying the request's id as it was written when it could be read, so the client learns what was
 * wrong instead of waiting (a broken response is only reported); the stream goes on with the next line.
 */
export class StdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly lines = messageLines(
    (message) => this.onmessage?.(message),
    (error) => {
      this.onerror?.(new UnreadableMessageError(`unreadable message from the client: ${error.message}`));
      if (error.answerable) void this.write(decodeErrorLine(error));
    },
  );
  private readonly onData = (chunk: string) => this.lines.push(chunk);
  private readonly onError = (error: Error) => this.onerror?.(error);
  private started = false;

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
  ) {}

  async start(): Promise<void> {
    if (this.started) throw new Error("the stdio transport is already started");
    this.started = true;
    this.stdin.setEncoding("utf8");
    this.stdin.on("data", this.onData);
    this.stdin.on("error", this.onError);
  }

  /**
   * Resolves once the line is handed to stdout, without waiting for a drain: a listener per write would pile
   * up for a client that is not reading. What stdout still buffers is bounded by the ClientOutbox over this.
   */
  send(message: JSONRPCMessage): Promise<void> {
    return this.write(encodeMessage(message));
  }

  private write(line: string): Promise<void> {
    this.stdout.write(line);
    return Promise.resolve();
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onError);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.onclose?.();
  }
}
