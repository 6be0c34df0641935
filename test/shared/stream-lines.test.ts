// Lines written to one stream in one turn (what one read sets off) reach it in two writes at most, in order; a lone line at once.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { beginTurn, TurnWriter } from "../../src/shared/stream-lines.js";

/** A stream that keeps each write it is given, as the stream received it. */
function recording(options: { highWaterMark?: number } = {}): { stream: Writable; writes: string[] } {
  const writes: string[] = [];
  const stream = new Writable({
    decodeStrings: false,
    highWaterMark: options.highWaterMark,
    write(chunk: string, _encoding, done) {
      writes.push(chunk);
      done();
    },
  });
  return { stream, writes };
}

const turnEnds = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("TurnWriter", () => {
  it("writes the first line of a turn at once and the rest as one write once the turn's continuations have run", async () => {
    const { stream, writes } = recording();
    const writer = new TurnWriter(stream);
    // A read of a client's or a child's pipe begins a turn (textSocket).
    beginTurn();
    writer.write("a\n");
    expect(writes).toEqual(["a\n"]);
    // Continuations of the same turn, as answers settled from one chunk of a child's output run, each after its
    // own number of steps; what each finds written when it writes is kept.
    const seen: string[][] = [];
    await Promise.all(
      ["b\n", "c\n", "d\n"].map(async (line, steps) => {
        for (let step = 0; step < steps; step++) await null;
        writer.write(line);
        seen.push([...writes]);
      }),
    );
    expect(seen).toEqual([["a\n"], ["a\n"], ["a\n"]]);
    await turnEnds();
    expect(writes).toEqual(["a\n", "b\nc\nd\n"]);
    // A later turn starts afresh: its first line goes at once.
    beginTurn();
    writer.write("e\n");
    expect(writes).toEqual(["a\n", "b\nc\nd\n", "e\n"]);
    // Lines where no read began a turn (a timer's, an HTTP request's) are held, and leave together once the
    // microtasks have run: none waits for a read that may never come.
    await turnEnds();
    writer.write("f\n");
    writer.write("g\n");
    expect(writes).toEqual(["a\n", "b\nc\nd\n", "e\n"]);
    await turnEnds();
    expect(writes).toEqual(["a\n", "b\nc\nd\n", "e\n", "f\ng\n"]);
  });

  it("with a group, writes the held lines each time they make one, and the rest once the turn's continuations have run", async () => {
    const { stream, writes } = recording();
    const writer = new TurnWriter(stream, 3);
    beginTurn();
    // The first line at once; each third line held after it writes the three, as a chunk's requests to a child are.
    for (const line of ["1\n", "2\n", "3\n", "4\n", "5\n", "6\n", "7\n", "8\n"]) writer.write(line);
    expect(writes).toEqual(["1\n", "2\n3\n4\n", "5\n6\n7\n"]);
    // Continuations of the same turn join the one left over.
    await null;
    writer.write("9\n");
    expect(writes).toHaveLength(3);
    await turnEnds();
    expect(writes).toEqual(["1\n", "2\n3\n4\n", "5\n6\n7\n", "8\n9\n"]);
    // A later turn starts afresh: its first line at once, the next held for its end.
    beginTurn();
    writer.write("10\n");
    writer.write("11\n");
    expect(writes).toHaveLength(5);
    await turnEnds();
    expect(writes).toEqual(["1\n", "2\n3\n4\n", "5\n6\n7\n", "8\n9\n", "10\n", "11\n"]);
  });

  it("answers as the stream stands: false once its buffer is past its high-water mark", async () => {
    const writes: string[] = [];
    let release: (() => void) | undefined;
    // A stream whose reader has stopped: the first write never completes, so the buffer fills.
    const stream = new Writable({
      decodeStrings: false,
      highWaterMark: 4,
      write(chunk: string, _encoding, done) {
        writes.push(chunk);
        release = done;
      },
    });
    const writer = new TurnWriter(stream);
    expect(writer.write("12345\n")).toBe(false);
    expect(writer.write("held\n")).toBe(false);
    await turnEnds();
    release?.();
    await turnEnds();
    expect(writes.join("")).toBe("12345\nheld\n");
  });

  it("writes what it holds when flushed, before the stream is ended, and drops nothing written before", async () => {
    const { stream, writes } = recording();
    const writer = new TurnWriter(stream);
    writer.write("first\n");
    writer.write("cancel\n");
    writer.flush();
    stream.end();
    await turnEnds();
    expect(writes).toEqual(["first\n", "cancel\n"]);
  });

  it("raises no error when a turn ends after its stream has ended", async () => {
    const { stream, writes } = recording();
    const errors: Error[] = [];
    stream.on("error", (error) => errors.push(error));
    const writer = new TurnWriter(stream);
    writer.write("first\n");
    writer.write("late\n");
    stream.end();
    await turnEnds();
    expect(writes).toEqual(["first\n"]);
    expect(errors).toEqual([]);
  });
});
