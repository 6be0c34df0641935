// Owns the baseline hops' reading of a pipe as lines. Both hops that read messages (the reading relay, the least
// gateway) read as gaggle reads its own pipes (src/shared/stream-lines.ts): each chunk into one reused buffer through
// Node's `onread`, without the Readable machinery, which costs a hop about 5 µs a call on one core (its per-chunk
// bookkeeping, a buffer allocated for each read, a nextTick each read). Read alike, the hops differ only in what they
// do with each line.
import { Socket } from "node:net";
import { StringDecoder } from "node:string_decoder";

const READ_BYTES = 64 * 1024;

/**
 * Calls `each` with every line (without its "\n") of the process's stdin or of a child's stdout, as soon as the line
 * is complete; returns the socket that reads it, which ends ('end') when the pipe does. A child's stdout is read on
 * the libuv handle child_process made for it, which its stream lets go of unread, as gaggle does.
 */
export function eachLine(from, each) {
  const source = from === process.stdin ? { fd: 0 } : { handle: takeHandle(from) };
  const decoder = new StringDecoder("utf8");
  let partial = "";
  /** The last chunk ended in a byte of a character of several: the decoder may hold its start. */
  let cut = false;
  const read = (bytes, buffer) => {
    // A chunk that ends in ASCII, after one that did, is whole characters: decoded in place.
    const whole = !cut && buffer[bytes - 1] < 0x80;
    cut = buffer[bytes - 1] >= 0x80;
    const chunk = whole ? buffer.toString("utf8", 0, bytes) : decoder.write(buffer.subarray(0, bytes));
    let start = 0;
    let newline;
    while ((newline = chunk.indexOf("\n", start)) !== -1) {
      const line = partial + chunk.slice(start, newline);
      partial = "";
      start = newline + 1;
      each(line);
    }
    partial += chunk.slice(start);
  };
  return new Socket({ ...source, readable: true, writable: false, onread: { buffer: Buffer.allocUnsafe(READ_BYTES), callback: read } });
}

/** The libuv handle of a child's stdout stream, which the stream lets go of unread; the stream is destroyed. */
function takeHandle(stream) {
  const handle = stream._handle;
  if (typeof handle?.readStart !== "function") throw new Error("lines.mjs reads a pipe the child was spawned with");
  stream._handle = null;
  stream.destroy();
  return handle;
}
