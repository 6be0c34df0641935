// gaggle's end of an MCP client's stdio: each line from stdin decoded once for the connection, each message out one line on stdout.
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Readable, Writable } from "node:stream";
import { UnreadableMessageError } from "../shared/errors.js";
import { decodeErrorLine, encodeMessage, messageLines } from "../shared/json-rpc-codec.js";
import { ClientOutbox, type OutboxOptions } from "./client-outbox.js";
import { SENT, type Link, type LinkReceiver } from "../shared/link.js";
import { TurnWriter } from "../shared/stream-lines.js";

/**
 * A line that is not a JSON-RPC message is answered with JSON-RPC's parse error (-32700) or invalid request
 * (-32600), carrying the request's id as it was written when it could be read, so the client learns what was
 * wrong instead of waiting (a broken response is only reported); the stream goes on with the next line.
 */
export class StdioLink implements Link {
  private receiver: LinkReceiver | undefined;
  private readonly lines = messageLines(
    (message) => this.receiver?.receive(message),
    (error) => {
      this.receiver?.error(new UnreadableMessageError(`unreadable message from the client: ${error.message}`));
      if (error.answerable) void this.write(decodeErrorLine(error));
    },
  );
  private readonly onData = (chunk: string) => this.lines.push(chunk);
  private readonly onError = (error: Error) => this.receiver?.error(error);
  /** What waits for the client, bounded: stdout is the one stream every message travels on. */
  private readonly outbox: ClientOutbox;
  /** The answers to one chunk of requests leave in one write. */
  private readonly lineOut: TurnWriter;

  constructor(
    outbox: Omit<OutboxOptions, "onUnsent">,
    private readonly stdin: Readable = process.stdin,
    stdout: Writable = process.stdout,
  ) {
    this.lineOut = new TurnWriter(stdout);
    this.outbox = new ClientOutbox((message) => this.write(encodeMessage(message)), { ...outbox, onUnsent: (error) => this.onError(error) }, stdout);
  }

  async start(receiver: LinkReceiver): Promise<void> {
    if (this.receiver) throw new Error("the stdio link is already started");
    this.receiver = receiver;
    this.stdin.setEncoding("utf8");
    this.stdin.on("data", this.onData);
    this.stdin.on("error", this.onError);
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.outbox.send(message, options);
  }

  /**
   * Resolves once the line is handed to stdout, without waiting for a drain: a listener per write would pile
   * up for a client that is not reading. What stdout still buffers is bounded by the outbox.
   */
  private write(line: string): Promise<void> {
    this.lineOut.write(line);
    return SENT;
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onError);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.outbox.closed();
    this.receiver?.closed();
  }
}
