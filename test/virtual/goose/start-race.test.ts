// Two goslings started at once for the last place: both pass the first count of goslings, then both wait while Goose
// is looked for; the count is taken again where a gosling is made, so one starts and the other is refused as a start
// past the limit always is.
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { holdStats, type StatHold } from "../../helpers/held-stat.js";
import { until } from "../../helpers/poll.js";
import { FAKE_GOOSE, failureOf, gooseConfig } from "./helpers.js";

let gaggle: RunningGaggle | undefined;
let hold: StatHold | undefined;
afterEach(async () => {
  hold?.letGo();
  hold = undefined;
  await gaggle?.close();
  gaggle = undefined;
});

describe("two goslings started at once for the last place", () => {
  it.each([
    ["max_total = 1", "1 gosling not released at once, the most [virtual.goose] max_total allows (1)"],
    [
      "max_total_per_principal = 1",
      'you ("local") hold 1 gosling not released, the most [virtual.goose] max_total_per_principal allows each principal (1)',
    ],
  ])("with %s: one starts, and the other is refused as a later start is", async (limit, refusal) => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
    // Goose under a path of its own, which only the look for Goose before a gosling is made stats.
    const goose = join(dir, "goose");
    symlinkSync(FAKE_GOOSE, goose);
    gaggle = await startGaggle(gooseConfig(dir, `command = ${JSON.stringify(goose)}\n${limit}`), { env: { XDG_STATE_HOME: join(dir, "xdg-state") } });
    hold = await holdStats(gaggle.pid, goose);
    const run = (prompt: string) => gaggle!.meta("execute_child_tool", { server_id: "goose", tool_name: "run_goose", arguments: { prompt } });

    const racing = [run("first"), run("second")];
    // Each start counted the goslings, found room, and waits on the look for Goose: neither gosling is made yet.
    await until(
      () => hold!.held(),
      (held) => held === 2,
    );
    hold.letGo();
    const results = await Promise.all(racing);

    const started = results.filter((result) => !result.isError);
    expect(started).toHaveLength(1);
    expect(textOf(started[0]!)).toContain("Started gosling");
    const refused = failureOf(results.find((result) => result.isError)!);
    expect(refused).toEqual(failureOf(await run("third")));
    expect(refused).toMatchObject({ code: "LIMIT_REACHED", error: refusal });
  });
});
