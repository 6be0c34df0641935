// gaggle's end of an MCP client's stdio: each line from stdin decoded once for the connection, each message out one line on stdout.
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { fstat, type Stats } from "node:fs";
import type { Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import { UnreadableMessageError } from "../shared/errors.js";
import { decodeErrorLine, encodeMessage, messageLines } from "../shared/json-rpc-codec.js";
import { ClientOutbox, type OutboxOptions } from "./client-outbox.js";
import { SENT, type Link, type LinkReceiver } from "../shared/link.js";
import { textSocket, TurnWriter } from "../shared/stream-lines.js";

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
  /** What the link reads, once started: the stream it was given, or the process's stdin (see stdinSocket). */
  private input: Readable | undefined;
  private closed = false;
  private endInput!: (why: InputEnd) => void;
  /** Settles once the client's input has ended or failed: the client is gone. */
  readonly inputEnded: Promise<InputEnd>;

  /** `stdin`: the stream to read; the process's own stdin when none is given. */
  constructor(
    outbox: Omit<OutboxOptions, "onUnsent">,
    private readonly stdin?: Readable,
    stdout: Writable = process.stdout,
  ) {
    this.lineOut = new TurnWriter(stdout);
    this.outbox = new ClientOutbox((message) => this.write(encodeMessage(message)), { ...outbox, onUnsent: (error) => this.onError(error) }, stdout);
    this.inputEnded = new Promise((resolve) => (this.endInput = resolve));
  }

  async start(receiver: LinkReceiver): Promise<void> {
    if (this.receiver) throw new Error("the stdio link is already started");
    this.receiver = receiver;
    const own = this.stdin === undefined ? await stdinSocket(this.onData) : undefined;
    // Closed while the kind of stdin was looked up: nothing is read.
    if (this.closed) return void own?.destroy();
    const input = this.stdin ?? own ?? process.stdin;
    if (!own) {
      input.setEncoding("utf8");
      input.on("data", this.onData);
    }
    input.on("error", this.onError);
    input.once("end", () => this.endInput("stdin closed"));
    input.once("error", () => this.endInput("stdin error"));
    this.input = input;
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
    this.closed = true;
    const input = this.input;
    if (input) {
      input.off("data", this.onData);
      input.off("error", this.onError);
      if (input.listenerCount("data") === 0) input.pause();
    }
    this.outbox.closed();
    this.receiver?.closed();
  }
}

export type InputEnd = "stdin closed" | "stdin error";

/**
 * The process's stdin as a socket of gaggle's own on fd 0 (textSocket), when it is a pipe or a socket (every MCP
 * client's). Undefined for a terminal or a file, which process.stdin reads. process.stdin may exist, made before the
 * link started, but it is never read (two readers of one descriptor would split its bytes), and it must not be made
 * once the link reads: libuv refuses a second handle on a descriptor it watches (EEXIST), so gaggle asks the
 * descriptor itself whether it is a terminal (`isatty(0)`). One link reads the process's stdin.
 */
async function stdinSocket(onText: (text: string) => void): Promise<Socket | undefined> {
  const kind = await new Promise<Stats>((resolve, reject) => fstat(0, (error, stats) => (error ? reject(error) : resolve(stats))));
  if (!kind.isFIFO() && !kind.isSocket()) return undefined;
  return textSocket({ fd: 0 }, onText);
}
