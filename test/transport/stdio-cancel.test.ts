// A request the client cancels gets no answer on stdio, as the specification asks of a receiver: here a
// tools/list in proxy mode that waits for a child still starting.
import { spawn } from "node:child_process";
import { expect, it } from "vitest";
import { writeConfig } from "../helpers/gaggle.js";
import { CLI, fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { waitGone } from "../helpers/processes.js";

type Frame = Record<string, unknown>;

it("a cancelled tools/list is never answered; the requests around it are", async () => {
  // The slow child is unknown to the catalog, so a first tools/list waits for it (at most list_wait_ms).
  const config = writeConfig(
    ['[gateway]\nexpose = "both"\nlist_wait_ms = 500\n', NO_BUILT_INS, fixtureChild("slow", "slow.mjs", 'env = { SLOW_START_MS = "1500" }')].join(
      "\n",
    ),
  );
  const gaggle = spawn(process.execPath, [CLI, "--config", config], { stdio: "pipe" });
  const frames: Frame[] = [];
  let partial = "";
  gaggle.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop()!;
    for (const line of lines) frames.push(JSON.parse(line) as Frame);
  });
  const send = (message: Frame) => gaggle.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  const answered = (id: number) => until(() => frames.find((frame) => frame.id === id && !("method" in frame)), Boolean);
  try {
    send({ id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
    await answered(1);
    send({ method: "notifications/initialized" });
    send({ id: 2, method: "tools/list" });
    send({ method: "notifications/cancelled", params: { requestId: 2, reason: "the client gave up" } });
    // Once the slow child runs, the list's wait is long over: an answer to it would have come by now.
    await until(
      async () => {
        send({ id: 3, method: "tools/call", params: { name: "get_child_status", arguments: { server_id: "slow" } } });
        const status = (await answered(3)) as { result: { content: Array<{ text: string }> } };
        frames.splice(frames.indexOf(status), 1);
        return (JSON.parse(status.result.content[0]!.text) as { status: string }).status;
      },
      (status) => status === "running",
    );
    send({ id: 4, method: "tools/list" });
    expect(((await answered(4)) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    expect(frames.filter((frame) => frame.id === 2)).toEqual([]);
  } finally {
    gaggle.stdin.end();
    expect(await waitGone([gaggle.pid!])).toEqual([]);
  }
});
