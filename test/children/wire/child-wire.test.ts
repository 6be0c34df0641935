import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ErrorCode, type JSONRPCMessage, type McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChildWire } from "../../../src/children/wire/child-wire.js";
import { Cancellation } from "../../../src/children/calls/cancellation.js";
import { TransportLink, type Link } from "../../../src/shared/link.js";
import { UnparsedResult } from "../../../src/shared/answer-line.js";
import { messageText } from "../../../src/shared/json-rpc-codec.js";

/** A 2025 era as the wire starts with: nothing is negotiated in these tests, so nothing of it is used. */
const LEGACY = { choice: "2025-11-25" as const, discoverFirst: false, envelope: () => ({}), probeTimeoutMs: 1000 };

/** A ChildWire linked in memory to a child end the test drives: what the child was sent, and a way to answer. */
async function linked() {
  const [gaggleEnd, childEnd] = InMemoryTransport.createLinkedPair();
  const received: JSONRPCMessage[] = [];
  childEnd.onmessage = (message) => void received.push(message);
  const transport = new ChildWire(new TransportLink(gaggleEnd), LEGACY, { closed: () => {} });
  await transport.start();
  await childEnd.start();
  const cancelledIds = () =>
    received.flatMap((message) => ("method" in message && message.method === "notifications/cancelled" ? [message.params?.requestId] : []));
  return { transport, received, cancelledIds, childSends: (message: JSONRPCMessage) => childEnd.send(message) };
}

/** Records how a forwarded request ended; `ended` lists the requests that have, in order. */
function track(request: Promise<unknown>, ended: string[], label: string): Promise<"answered" | McpError> {
  return request.then(
    () => (ended.push(label), "answered" as const),
    (error: McpError) => (ended.push(label), error),
  );
}

// Timers and performance.now() are the test's to move: each deadline is checked to the millisecond.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("ChildWire timeouts", () => {
  it("times out each request at its own deadline, and tells the child about each", async () => {
    const { transport, cancelledIds } = await linked();
    const ended: string[] = [];
    const limits = { timeoutMs: 300, maxTotalTimeoutMs: 10_000 };
    const first = track(transport.forward("tools/call", { name: "a" }, limits, {}), ended, "first");
    await vi.advanceTimersByTimeAsync(200);
    const second = track(transport.forward("tools/call", { name: "b" }, limits, {}), ended, "second");

    await vi.advanceTimersByTimeAsync(99);
    expect(ended).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ended).toEqual(["first"]);
    const firstError = (await first) as McpError;
    expect(firstError.code).toBe(ErrorCode.RequestTimeout);
    expect(firstError.data).toEqual({ timeout: 300 });

    // The one timer was set again for the second request's own deadline, 300 ms after it was sent.
    await vi.advanceTimersByTimeAsync(199);
    expect(ended).toEqual(["first"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ended).toEqual(["first", "second"]);
    expect(((await second) as McpError).code).toBe(ErrorCode.RequestTimeout);
    expect(cancelledIds()).toEqual(["gaggle-1", "gaggle-2"]);
  });

  it("lets an answered request go, and keeps timing the ones still in flight", async () => {
    const { transport, cancelledIds, childSends } = await linked();
    const ended: string[] = [];
    const limits = { timeoutMs: 150, maxTotalTimeoutMs: 10_000 };
    const answered = track(transport.forward("tools/call", { name: "a" }, limits, {}), ended, "answered");
    const unanswered = track(transport.forward("tools/call", { name: "b" }, limits, {}), ended, "unanswered");
    await childSends({ jsonrpc: "2.0", id: "gaggle-1", result: { content: [] } });
    expect(await answered).toBe("answered");
    await vi.advanceTimersByTimeAsync(150);
    expect(((await unanswered) as McpError).code).toBe(ErrorCode.RequestTimeout);
    expect(cancelledIds()).toEqual(["gaggle-2"]);
  });

  it("restarts the timeout on progress, up to the total limit", async () => {
    const { transport, received, cancelledIds, childSends } = await linked();
    const progress: number[] = [];
    const limits = { timeoutMs: 400, maxTotalTimeoutMs: 700 };
    const onprogress = (p: { progress: number }) => void progress.push(p.progress);
    const ended: string[] = [];
    const request = track(transport.forward("tools/call", { name: "a" }, limits, { onprogress }), ended, "request");
    const token = (received[0] as { params: { _meta: { progressToken: string } } }).params._meta.progressToken;
    const report = (step: number) =>
      childSends({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: step } });

    // Progress at 300 and 600 ms moves the deadline past 400 ms, then past 700 ms...
    await vi.advanceTimersByTimeAsync(300);
    await report(1);
    await vi.advanceTimersByTimeAsync(300);
    await report(2);
    await vi.advanceTimersByTimeAsync(99);
    expect(ended).toEqual([]);
    // ...but progress after 700 ms in all ends the request, however recent the last progress was.
    await vi.advanceTimersByTimeAsync(1);
    await report(3);
    const error = (await request) as McpError;
    expect(error.message).toContain("Maximum total timeout exceeded");
    expect(error.data).toEqual({ maxTotalTimeout: 700, totalElapsed: 700 });
    expect(progress).toEqual([1, 2]);
    expect(cancelledIds()).toEqual([token]);
  });

  it("gives a request that waited its turn only the rest of its time, and says how long it queued and ran", async () => {
    const { transport, cancelledIds } = await linked();
    const ended: string[] = [];
    const limits = { timeoutMs: 300, maxTotalTimeoutMs: 10_000 };
    const request = track(transport.forward("tools/call", { name: "a" }, limits, {}, 200), ended, "request");
    await vi.advanceTimersByTimeAsync(99);
    expect(ended).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ended).toEqual(["request"]);
    const error = (await request) as McpError;
    expect(error.code).toBe(ErrorCode.RequestTimeout);
    expect(error.data).toEqual({ timeout: 300, queued: 200, ran: 100 });
    expect(cancelledIds()).toEqual(["gaggle-1"]);
  });

  it("fails the requests in flight at once when the child's connection closes", async () => {
    const { transport } = await linked();
    const limits = { timeoutMs: 200, maxTotalTimeoutMs: 10_000 };
    const first = transport.forward("tools/call", { name: "a" }, limits, {}).catch((error: McpError) => error);
    await transport.close();
    expect(((await first) as McpError).code).toBe(ErrorCode.ConnectionClosed);
  });
});

/** An owner that records what it is told, in order; it fails a request with an error of its own naming the wire's. */
function owner(told: string[]) {
  return {
    failure: (error: Error) => (told.push(`failure: ${error.message}`), new Error(`the owner's: ${error.message}`)),
    settled: () => void told.push("settled"),
  };
}

describe("ChildWire owners", () => {
  const limits = { timeoutMs: 100, maxTotalTimeoutMs: 10_000 };

  it("tells a request's owner of its answer before the promise settles", async () => {
    const { transport, childSends } = await linked();
    const told: string[] = [];
    const answer = transport.forward("tools/call", { name: "a" }, limits, {}, undefined, owner(told)).then((result) => {
      told.push("resolved");
      return result;
    });
    await childSends({ jsonrpc: "2.0", id: "gaggle-1", result: { content: [] } });
    expect(await answer).toEqual({ content: [] });
    expect(told).toEqual(["settled", "resolved"]);
  });

  it("fails a request with what its owner makes of the wire's error, once, and tells the child of a timeout", async () => {
    const { transport, cancelledIds } = await linked();
    const told: string[] = [];
    const failed = transport.forward("tools/call", { name: "a" }, limits, {}, undefined, owner(told)).catch((error: Error) => error.message);
    await vi.advanceTimersByTimeAsync(100);
    expect(await failed).toBe("the owner's: MCP error -32001: Request timed out");
    expect(told).toEqual(["failure: MCP error -32001: Request timed out", "settled"]);
    expect(cancelledIds()).toEqual(["gaggle-1"]);
  });

  it("fails a request cancelled before it was sent without sending it, its owner told", async () => {
    const { transport, received } = await linked();
    const told: string[] = [];
    const cancel = new Cancellation();
    cancel.abort("the client went away");
    const failed = transport.forward("tools/call", { name: "a" }, limits, { cancel }, undefined, owner(told)).catch((error: Error) => error.message);
    expect(await failed).toMatch(/^the owner's: /);
    expect(told).toEqual([expect.stringMatching(/^failure: /), "settled"]);
    expect(received).toEqual([]);
  });

  it("fails a request its link cannot write at once, and keeps nothing of it to time out", async () => {
    let sends = 0;
    const broken: Link = {
      start: () => Promise.resolve(),
      send: () => {
        sends++;
        throw new Error("the pipe is gone");
      },
      close: () => Promise.resolve(),
    };
    const wire = new ChildWire(broken, LEGACY, { closed: () => {} });
    await wire.start();
    const told: string[] = [];
    const failed = wire.forward("tools/call", { name: "a" }, limits, {}, undefined, owner(told)).catch((error: Error) => error.message);
    expect(await failed).toBe("the owner's: the pipe is gone");
    expect(told).toEqual(["failure: the pipe is gone", "settled"]);
    // Still awaited, it would time out and be cancelled at the child: a second send.
    await vi.advanceTimersByTimeAsync(1000);
    expect(sends).toBe(1);
  });
});

describe("ChildWire answers taken as their lines", () => {
  const limits = { timeoutMs: 100, maxTotalTimeoutMs: 10_000 };
  /** The hooks of a call whose caller relays its result (CallContext.relaysResult). */
  const relaying = { relaysResult: true };
  const line = (id: string) => `{"result":{"content":[{"type":"text","text":"as written"}],"futureField":1.50},"jsonrpc":"2.0","id":"${id}"}`;

  it("settles a request that takes its answer as a line with the line alone, written on as the child wrote it", async () => {
    const { transport } = await linked();
    const answer = transport.forward("tools/call", { name: "a" }, limits, relaying);
    expect(transport.receiveLine(line("gaggle-1"))).toBe(true);
    const result = await answer;
    expect(result).toBeInstanceOf(UnparsedResult);
    // Of the result's members only whether it is an error, which what observes the call reads.
    expect(Object.keys(result)).toEqual(["isError"]);
    expect(result.isError).toBe(false);
    // The client's id spliced into the child's own line: its number written as the child wrote it.
    expect(messageText({ jsonrpc: "2.0", id: 5, result })).toBe(line("gaggle-1").replace('"gaggle-1"', "5"));
    // Written any other way, it is the result the line holds.
    expect(JSON.stringify({ result })).toBe('{"result":{"content":[{"type":"text","text":"as written"}],"futureField":1.5}}');
  });

  it("leaves to be decoded a line for a request that reads its answer, one that is no plain answer, and one for no request", async () => {
    const { transport, childSends } = await linked();
    const reading = transport.forward("tools/call", { name: "a" }, limits, {});
    // Until a request takes its answer as a line, no line is looked at.
    expect(transport.receiveLine(line("gaggle-1"))).toBe(false);
    const taken = transport.forward("tools/call", { name: "b" }, limits, relaying);
    expect(transport.receiveLine(line("gaggle-1"))).toBe(false);
    expect(transport.receiveLine('{"result":{"content":[]},"jsonrpc":"2.0","id":"gaggle-2",}')).toBe(false);
    expect(transport.receiveLine('{"error":{"code":-1,"message":"no"},"jsonrpc":"2.0","id":"gaggle-2"}')).toBe(false);
    expect(transport.receiveLine(line("gaggle-9"))).toBe(false);
    await childSends({ jsonrpc: "2.0", id: "gaggle-1", result: { content: [] } });
    expect(await reading).toEqual({ content: [] });
    expect(transport.receiveLine(line("gaggle-2"))).toBe(true);
    expect(await taken).toBeInstanceOf(UnparsedResult);
  });

  it("tells of a result whose isError is true", async () => {
    const { transport } = await linked();
    const answer = transport.forward("tools/call", { name: "a" }, limits, relaying);
    const failed = '{"result":{"isError":false,"content":[{"type":"text","text":"no"}],"isError":true},"jsonrpc":"2.0","id":"gaggle-1"}';
    expect(transport.receiveLine(failed)).toBe(true);
    expect(await answer).toMatchObject({ isError: true });
  });
});
