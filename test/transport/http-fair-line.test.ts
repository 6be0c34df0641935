// Two principals share one child that runs one call at a time: one principal's flood of calls holds another's
// call back by at most one of its own, since the child's line takes turns between principals.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";

const ANN = "ann-token-5Wq8zR2kLs";
const BOB = "bob-token-9Pf3vT6mJx";

let gaggle: HttpGaggle;
let ann: Client;
let bob: Client;

beforeAll(async () => {
  const tokens = `[gateway.auth_tokens]\nann = "${ANN}"\nbob = "${BOB}"\n`;
  gaggle = await startHttpGaggle([tokens, NO_BUILT_INS, fixtureChild("slow", "slow.mjs", "concurrency = 1")].join("\n"));
  ann = await gaggle.connect({ name: "ann", headers: { authorization: `Bearer ${ANN}` } });
  bob = await gaggle.connect({ name: "bob", headers: { authorization: `Bearer ${BOB}` } });
});
afterAll(() => gaggle?.stop());

const call = (client: Client, tool: string, args: Record<string, unknown>, signal?: AbortSignal) =>
  client.callTool(
    { name: "execute_child_tool", arguments: { server_id: "slow", tool_name: tool, arguments: args } },
    undefined,
    signal ? { signal } : {},
  ) as Promise<CallToolResult>;

/** The child's calls in the order they reached it (the fixture logs each tools/call as it arrives), and its queue depth. */
async function line(): Promise<{ calls: string[]; depth: number }> {
  const status = JSON.parse(textOf((await ann.callTool({ name: "get_child_status", arguments: { server_id: "slow" } })) as CallToolResult)) as {
    stderr: string[];
    queue_depth: number;
  };
  return { calls: status.stderr.filter((entry) => entry.startsWith("call ")), depth: status.queue_depth };
}

describe("one child's line, shared by two principals", () => {
  it("lets bob's call in right after ann's running call, ahead of the ones ann queued before it", async () => {
    // ann's first call runs until ann cancels it, so everything below queues behind it.
    const running = new AbortController();
    const first = call(ann, "sleep", { ms: 600_000 }, running.signal);
    await until(line, (now) => now.calls.length === 1 && now.depth === 1);
    const annQueued = [0, 1, 2].map(() => call(ann, "sleep", { ms: 0 }));
    await until(line, (now) => now.depth === 4);
    const bobs = call(bob, "echo", { text: "bob" });
    await until(line, (now) => now.depth === 5);
    running.abort("ann's first call has run long enough");
    await expect(first).rejects.toThrow();
    expect(textOf(await bobs)).toBe("bob");
    for (const result of await Promise.all(annQueued)) expect(textOf(result)).toMatch(/^slept 0 /);
    // ann's sleeps are each "call sleep", bob's echo is "call echo": it reached the child second, not last.
    expect((await line()).calls).toEqual(["call sleep", "call echo", "call sleep", "call sleep", "call sleep"]);
  });
});
