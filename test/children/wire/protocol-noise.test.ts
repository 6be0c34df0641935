// A child that floods gaggle with protocol errors (progress for unknown tokens, answers to ids never sent) costs
// a few lines of log, not one stack trace per message, and its calls are answered all the same.
import { describe, expect, it } from "vitest";
import { startGaggle, textOf } from "../../helpers/gaggle.js";
import { fixtureChild, NO_BUILT_INS } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

describe("protocol noise from a child", () => {
  it("is logged once per kind and summarised, and the child's next call is answered", async () => {
    const gaggle = await startGaggle([NO_BUILT_INS, fixtureChild("noisy", "noisy-protocol.mjs")].join("\n"));
    try {
      const call = (tool_name: string, args: Record<string, unknown>) =>
        gaggle.meta("execute_child_tool", { server_id: "noisy", tool_name, arguments: args });
      expect(textOf(await call("flood", { count: 100_000 }))).toBe("flooded 100000");
      expect(textOf(await call("echo_back", { text: "still here" }))).toBe("still here");
      await gaggle.meta("close_child_session", { server_id: "noisy" });
      const log = await until(
        () => gaggle.stderr(),
        (text) => text.includes("not logged one by one"),
      );
      // 100,000 messages of noise, told in a handful of lines.
      expect(log.length).toBeLessThan(20_000);
      expect(log).not.toContain('"stack"');
      const told = log.split("\n").filter((line) => line.includes("protocol errors from the child"));
      // Each kind's first is told on its own; every other message is counted, in one summary per window the flood
      // lasted (one, unless the machine is slow) and at the session's end.
      const summaries = told
        .filter((line) => line.includes("not logged one by one"))
        .map((line) => JSON.parse(line) as { total: number; counts: Record<string, number> });
      expect(told.length - summaries.length).toBeLessThanOrEqual(2);
      expect(summaries.reduce((sum, { total }) => sum + total, 0)).toBeGreaterThanOrEqual(100_000 - 2);
      for (const { total, counts } of summaries) expect(Object.values(counts).reduce((sum, count) => sum + count, 0)).toBe(total);
    } finally {
      await gaggle.close();
    }
  });
});
