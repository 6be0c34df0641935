import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ErrorCode, McpError, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { ForwardingTransport } from "../../src/children/forwarding-transport.js";

/** A ForwardingTransport linked in memory to a child end the test drives: what the child was sent, and a way to answer. */
async function linked() {
  const [gaggleEnd, childEnd] = InMemoryTransport.createLinkedPair();
  const received: JSONRPCMessage[] = [];
  childEnd.onmessage = (message) => void received.push(message);
  const transport = new ForwardingTransport(gaggleEnd);
  await transport.start();
  await childEnd.start();
  return { transport, received, childSends: (message: JSONRPCMessage) => childEnd.send(message) };
}

/** How a forwarded request ended, and what else had ended by then. */
function outcome(request: Promise<unknown>, ended: string[], label: string) {
  return request.then(
    () => {
      ended.push(label);
      return "answered";
    },
    (error: McpError) => {
      ended.push(label);
      return error;
    },
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("ForwardingTransport timeouts", () => {
  it("times out each request at its own deadline, and tells the child about each", async () => {
    const { transport, received } = await linked();
    const ended: string[] = [];
    const options = { timeoutMs: 300, maxTotalTimeoutMs: 10_000 };
    const first = outcome(transport.forward("tools/call", { name: "a" }, options), ended, "first");
    await sleep(200);
    const second = outcome(transport.forward("tools/call", { name: "b" }, options), ended, "second");

    const firstError = (await first) as McpError;
    expect(firstError.code).toBe(ErrorCode.RequestTimeout);
    expect(firstError.data).toEqual({ timeout: 300 });
    // The one timer fired for the first deadline; the second request was still waiting on its own.
    expect(ended).toEqual(["first"]);
    expect(((await second) as McpError).code).toBe(ErrorCode.RequestTimeout);

    const cancelled = received.filter((message) => "method" in message && message.method === "notifications/cancelled");
    expect(cancelled.map((message) => ("params" in message ? message.params?.requestId : undefined))).toEqual(["gaggle-1", "gaggle-2"]);
  });

  it("lets an answered request go, and keeps timing the ones still in flight", async () => {
    const { transport, childSends } = await linked();
    const ended: string[] = [];
    const options = { timeoutMs: 150, maxTotalTimeoutMs: 10_000 };
    const answered = outcome(transport.forward("tools/call", { name: "a" }, options), ended, "answered");
    const unanswered = outcome(transport.forward("tools/call", { name: "b" }, options), ended, "unanswered");
    await childSends({ jsonrpc: "2.0", id: "gaggle-1", result: { content: [] } });
    expect(await answered).toBe("answered");
    expect(((await unanswered) as McpError).code).toBe(ErrorCode.RequestTimeout);
  });

  it("restarts the timeout on progress, up to the total limit", async () => {
    const { transport, received, childSends } = await linked();
    const progress: number[] = [];
    const options = { timeoutMs: 400, maxTotalTimeoutMs: 700, onprogress: (p: { progress: number }) => void progress.push(p.progress) };
    const request = transport.forward("tools/call", { name: "a" }, options).catch((error: McpError) => error);
    const token = (received[0] as { params: { _meta: { progressToken: string } } }).params._meta.progressToken;
    // Progress every 100 ms keeps a 400 ms timeout from running out, until 700 ms have passed in all.
    for (let step = 1; step <= 8; step++) {
      await sleep(100);
      await childSends({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: step } });
    }
    const error = (await request) as McpError;
    expect(error.code).toBe(ErrorCode.RequestTimeout);
    expect(error.message).toContain("Maximum total timeout exceeded");
    expect(progress.slice(0, 5)).toEqual([1, 2, 3, 4, 5]);
  });
});
