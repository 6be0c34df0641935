// A stdio child SIGKILLed again and again with calls in flight, the bounded version of `npm run chaos`'s attack:
// every call settles, answered or failed with a code, none hangs, and the child serves again after.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startGaggle, textOf } from "../helpers/gaggle.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { carrying, killCarrying, waitGone } from "../helpers/processes.js";

const KILLS = 5;
const IN_FLIGHT = 16;
/** Past the child's timeout_ms, a call still unanswered is hung. */
const HUNG_AFTER_MS = 15_000;
const mark = `GAGGLE_TEST_MARK=crash-load-${randomUUID()}`;
afterAll(() => killCarrying(mark));

describe("a child killed under load", () => {
  it(`settles every call through ${KILLS} SIGKILLs with ${IN_FLIGHT} in flight, then serves again`, async () => {
    const [name, value] = mark.split("=") as [string, string];
    const child = fixtureChild("target", "echo.mjs", `concurrency = ${IN_FLIGHT}\ntimeout_ms = 10000`);
    const gaggle = await startGaggle(`[gateway]\nshutdown_grace_ms = 500\n${NO_BUILT_INS}\n${child}`, { env: { [name]: value } });
    const call = (tool: string, args: Record<string, unknown>) =>
      gaggle.client.callTool({ name: "execute_child_tool", arguments: { server_id: "target", tool_name: tool, arguments: args } }, undefined, {
        timeout: HUNG_AFTER_MS,
      }) as Promise<CallToolResult>;
    const codes = new Map<string, number>();
    let answered = 0;
    let stopping = false;
    const workers = Array.from({ length: IN_FLIGHT }, async (_, w) => {
      for (let i = 0; !stopping; i++) {
        // A hung call rejects with the SDK's request timeout, and fails the test here.
        const result = await call(i % 2 === 0 ? "sleep" : "echo", i % 2 === 0 ? { ms: (w * 7 + i) % 50 } : { text: `${w}.${i}` });
        if (!result.isError) answered++;
        else {
          const { code } = JSON.parse(textOf(result)) as { code: string };
          codes.set(code, (codes.get(code) ?? 0) + 1);
        }
      }
    });

    const status = async () => await gaggle.metaJson<{ status: string; pid: number | null }>("get_child_status", { server_id: "target" });
    let last: number | null = null;
    for (let kill = 0; kill < KILLS; kill++) {
      const running = await until(status, (s) => s.status === "running" && s.pid !== null && s.pid !== last);
      const before = answered;
      await until(
        () => answered,
        (n) => n > before + IN_FLIGHT,
      );
      process.kill(running.pid!, "SIGKILL");
      last = running.pid;
    }
    stopping = true;
    await Promise.all(workers);

    expect(answered).toBeGreaterThan(KILLS * IN_FLIGHT);
    // The kills cut calls off, and those fail at once with the code for a child that died.
    expect(codes.get("SERVER_FAILED")).toBeGreaterThan(0);
    expect(textOf(await call("echo", { text: "after" }))).toBe("after");
    await gaggle.close();
    expect(await waitGone(carrying(mark))).toEqual([]);
  });
});
