// A client's outbox over Streamable HTTP: each request's stream is found by the request's id, and what every open
// stream holds counts against the bound, whichever streams have closed before it.
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { ClientOutbox, type OutStream } from "../../src/transport/client-outbox.js";
import { keepAnswerLine, UnparsedResult } from "../../src/shared/answer-line.js";

/** An SSE response as the outbox sees it: what it buffers, and whether it asks to be waited for. */
class Stream extends EventEmitter {
  writableLength = 0;
  writableNeedDrain = false;
  readonly writableHighWaterMark = 16 * 1024;

  /** The client stops reading: `bytes` wait in the stream. */
  stall(bytes: number): void {
    this.writableLength = bytes;
    this.writableNeedDrain = true;
  }

  drain(): void {
    this.writableLength = 0;
    this.writableNeedDrain = false;
    this.emit("drain");
  }
}

/** The outbox reads only the members OutStream names, and listens with on and off (whose return it ignores). */
function carry(box: ClientOutbox, stream: Stream, keys: Array<string | number | undefined>): void {
  box.carry(stream as unknown as OutStream, keys);
}

function outbox() {
  const written: Array<{ message: JSONRPCMessage; options: TransportSendOptions | undefined }> = [];
  const backlog: boolean[] = [];
  const box = new ClientOutbox(
    (message, options) => {
      written.push({ message, options });
      return Promise.resolve();
    },
    { maxBytes: 1000, session: "s", onBacklog: (backlogged) => backlog.push(backlogged), onUnsent: () => {} },
  );
  return { box, written, backlog };
}

const answer = (id: string | number): JSONRPCMessage => ({ jsonrpc: "2.0", id, result: {} });
const log = (data: string): JSONRPCMessage => ({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data } });

describe("a client's outbox over Streamable HTTP", () => {
  it("counts what every open stream holds, as streams close in any order", async () => {
    const { box, written, backlog } = outbox();
    const [one, two, three] = [new Stream(), new Stream(), new Stream()];
    carry(box, one, [1]);
    carry(box, two, ["two"]);
    carry(box, three, [3]);
    one.emit("close");
    // The last stream opened stops being read: it alone holds more than the bound.
    three.stall(2000);
    await box.send(answer(3));
    expect(backlog).toEqual([true]);
    // A log for another request's stream is dropped while the client holds too much; the answer waits in its stream.
    await box.send(log("dropped"), { relatedRequestId: "two" });
    expect(written).toEqual([]);
    three.drain();
    expect(written.map(({ message }) => (message as { id?: unknown }).id)).toEqual([3]);
    expect(backlog).toEqual([true, false]);
    // The warning for what was dropped goes before the next message on that stream.
    await box.send(answer("two"));
    expect(written.slice(1).map(({ message }) => ("method" in message ? message.method : message.id))).toEqual(["notifications/message", "two"]);
    expect(written[1]!.options).toEqual({ relatedRequestId: "two" });
  });

  it("hands the transport a message for a request whose stream closed, and one for no request to the stream that carries those", async () => {
    const { box, written } = outbox();
    const [call, unrelated] = [new Stream(), new Stream()];
    carry(box, call, [7]);
    carry(box, unrelated, [undefined]);
    call.emit("close");
    await box.send(answer(7));
    expect(written.map(({ message }) => (message as { id?: unknown }).id)).toEqual([7]);
    // Only the stream of messages related to no request is left: its stall alone puts the client past the bound.
    unrelated.stall(5000);
    await box.send(log("dropped"));
    expect(written).toHaveLength(1);
    unrelated.drain();
    await box.send(log("kept"));
    const logs = written.slice(1).map(({ message }) => ("params" in message ? message.params?.data : undefined));
    expect(logs).toEqual(["gaggle dropped 1 log/progress notifications while this client was not reading", "kept"]);
  });
  it("counts a child's answer passed on as its line by the line's size, not by the result serialized again", async () => {
    const { box, backlog } = outbox();
    const stream = new Stream();
    carry(box, stream, [1, 2, 3]);
    stream.stall(0);
    // Lines of 400 characters, mostly the child's own spacing, which JSON.stringify would not write: each counts 400.
    const spaced = (id: number): JSONRPCMessage => {
      const line = `{"result":{"content":[]${" ".repeat(340)}},"jsonrpc":"2.0","id":"gaggle-${id}"}`;
      const result = new UnparsedResult(false);
      keepAnswerLine(result, line, `gaggle-${id}`);
      return { jsonrpc: "2.0", id, result: result as unknown as Record<string, unknown> };
    };
    await box.send(spaced(1));
    await box.send(spaced(2));
    expect(backlog).toEqual([]);
    // 1,200 held once the third is: the next finds the client past the bound of 1,000.
    await box.send(spaced(3));
    await box.send(spaced(3));
    expect(backlog).toEqual([true]);
  });
});
