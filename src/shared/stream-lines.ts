// A text stream as lines: read, cut at each newline, holding at most one partial line and never more than `maxChars`
// of it; written, the lines of one turn of the event loop sent together. A pipe or socket read as text without the
// Readable machinery.
import { Socket, type SocketConstructorOpts } from "node:net";
import type { Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/**
 * A line longer than `maxChars` is emitted cut, with a note, and the rest of it skipped up to its newline,
 * so a process that writes without newlines cannot grow gaggle's memory. A trailing `\r` is dropped.
 */
export class LineSplitter {
  private partial = "";
  private skipping = false;

  constructor(
    private readonly maxChars: number,
    private readonly emit: (line: string) => void,
  ) {}

  /** The line being written, not yet ended by a newline. */
  get pending(): string {
    return this.skipping ? "" : this.partial;
  }

  push(chunk: string): void {
    let start = 0;
    let newline: number;
    while ((newline = chunk.indexOf("\n", start)) !== -1) {
      if (this.skipping) this.skipping = false;
      else this.emit(withoutCarriageReturn(this.partial === "" ? chunk.slice(start, newline) : this.partial + chunk.slice(start, newline)));
      this.partial = "";
      start = newline + 1;
    }
    if (this.skipping || start === chunk.length) return;
    this.partial += start === 0 ? chunk : chunk.slice(start);
    if (this.partial.length > this.maxChars) {
      this.emit(`${this.partial.slice(0, this.maxChars)} …[line cut at ${this.maxChars} characters]`);
      this.partial = "";
      this.skipping = true;
    }
  }

  /** Emits the partial line, if any: for the end of the stream. */
  flush(): void {
    if (this.partial !== "" && !this.skipping) this.emit(withoutCarriageReturn(this.partial));
    this.partial = "";
    this.skipping = false;
  }
}

function withoutCarriageReturn(line: string): string {
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

/** A settled promise: a reaction on it is the cheapest way to run code once the microtasks queued so far have run. */
const SETTLED = Promise.resolve();

/** Which turn of the event loop it is, as far as lines are written: one more at each read of a text socket. */
let turn = 0;

/**
 * A new turn begins: what a read of a text socket (textSocket) sets off, a callback and the continuations it queues,
 * is one turn, and a TurnWriter writes the first line it is given in it at once.
 */
export function beginTurn(): void {
  turn++;
}

/**
 * Writes lines to one stream so that those written in one turn (see beginTurn: what one read of a client's or a
 * child's pipe sets off) leave in few system calls: the answers read from one chunk of a child's output reach the
 * client in one write instead of a write each. The first line of a turn is written at once, so a lone message waits
 * for nothing and nothing is queued for it; the ones after it are joined and written as one text once the turn's
 * continuations have run: a check queued behind them (a microtask) queues itself again while lines keep coming, and
 * once a pass brings none, writes what it holds. With a `group`, a line that makes the held lines that many writes
 * them at once, so that the reader starts on them while later ones are made (a child's requests: see ProcessLink). A
 * line written where no read began a turn (a timer, an HTTP request) is held the same way, to be written before the
 * microtasks run out. A nextTick would do the check's work at several times the cost (Node builds its tick record
 * through a slow path). Order is the order of the calls.
 */
export class TurnWriter {
  /** The turn whose first line was written. */
  private wroteIn = -1;
  /** The lines held for the end of the turn, joined. */
  private held: string | undefined;
  /** How many lines `held` joins. */
  private heldLines = 0;
  /** Lines held since the turn's check was last queued: while any come, the turn goes on. */
  private heldSinceCheck = 0;
  /** A check of the turn's end is queued. */
  private checking = false;
  private readonly checkTurn = () => {
    if (this.heldSinceCheck > 0) {
      this.heldSinceCheck = 0;
      void SETTLED.then(this.checkTurn);
      return;
    }
    this.checking = false;
    this.flush();
  };

  /** `group`: the most lines held at once; the line that makes them this many writes them. */
  constructor(
    readonly stream: Writable,
    private readonly group = Infinity,
  ) {}

  /**
   * False once the stream's buffer is past its high-water mark, as the stream's own write() answers: wait for its
   * 'drain'. A line held for the end of the turn answers as the stream stands then.
   */
  write(line: string): boolean {
    if (this.wroteIn !== turn && this.held === undefined) {
      this.wroteIn = turn;
      return this.stream.write(line);
    }
    this.held = this.held === undefined ? line : this.held + line;
    if (this.checking) this.heldSinceCheck++;
    else {
      this.checking = true;
      // Counted as come since the check: the check's first pass waits behind what was queued after it, too.
      this.heldSinceCheck = 1;
      void SETTLED.then(this.checkTurn);
    }
    if (++this.heldLines >= this.group) this.flush();
    return !this.stream.writableNeedDrain;
  }

  /** Writes what this turn holds now: called before the stream is ended, so that nothing written before is lost. */
  flush(): void {
    const text = this.held;
    if (text === undefined) return;
    this.held = undefined;
    this.heldLines = 0;
    if (!this.stream.writableEnded && !this.stream.destroyed) this.stream.write(text);
  }
}

/** How much one read of a pipe or socket takes: a pipe's default high-water mark. */
const READ_BYTES = 64 * 1024;

/** What a text socket reads: a descriptor, or the libuv handle of a stream that let go of it (see GroupProcess). */
export type SocketSource = { fd: number } | { handle: object };

/**
 * A socket of gaggle's own on a pipe or socket, read with Node's documented `onread`: each chunk's text goes to
 * `onText` from one reused buffer, decoded as UTF-8 (a character cut across two reads arrives whole), without the
 * Readable machinery between: its per-chunk bookkeeping, the buffer allocated for each read and the nextTick each read
 * schedules cost several thousand instructions a message. `onText` answering false stops reading until the socket's
 * `resume()`. The socket ends ('end', then 'close') and fails ('error') as any does; what the decoder holds at the
 * end reaches `onText` before 'end' does.
 */
export function textSocket(source: SocketSource, onText: (text: string) => boolean | void): Socket {
  const decoder = new StringDecoder("utf8");
  /** The last chunk ended in a byte of a character of several: the decoder may hold its start. */
  let cut = false;
  const read = (bytes: number, buffer: Buffer): boolean | void => {
    beginTurn();
    // A chunk that ends in ASCII, after one that did, is whole characters: decoded in place, with no view made of it.
    if (!cut && buffer[bytes - 1]! < 0x80) return onText(buffer.toString(undefined, 0, bytes));
    cut = buffer[bytes - 1]! >= 0x80;
    return onText(decoder.write(buffer.subarray(0, bytes)));
  };
  const options = { ...source, readable: true, writable: false, onread: { buffer: Buffer.allocUnsafe(READ_BYTES), callback: read } };
  const socket = new Socket(options as SocketConstructorOpts);
  socket.prependOnceListener("end", () => {
    const rest = decoder.end();
    if (rest !== "") onText(rest);
  });
  return socket;
}
