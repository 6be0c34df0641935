// Two sessions of an agent started at once for the last place: both pass the first count of live sessions, then both
// wait while the agent's command is looked for; the count is taken again where a session is made, so one starts and
// the other is refused as a start past the limit always is.
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { failureOf, startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { holdStats, type StatHold } from "../../helpers/held-stat.js";
import { until } from "../../helpers/poll.js";
import { agentConfig, agentDirs, callAgents } from "./helpers.js";

let gaggle: RunningGaggle | undefined;
let hold: StatHold | undefined;
afterEach(async () => {
  hold?.letGo();
  hold = undefined;
  await gaggle?.close();
  gaggle = undefined;
});

describe("two sessions of an agent started at once for the last place", () => {
  it.each([
    ["max_active = 1", '1 live session of agent "fake" at once, the most [agents.fake] max_active allows (1)'],
    [
      "max_active_per_principal = 1",
      'you ("local") hold 1 live session of agent "fake", the most [agents.fake] max_active_per_principal allows each principal (1)',
    ],
  ])("with %s: one starts, and the other is refused as a later start is", async (limit, refusal) => {
    const dirs = agentDirs();
    // The agent's command under a path of its own, which only the look for it before a session is made stats.
    const command = join(dirs.dir, "agent");
    symlinkSync(process.execPath, command);
    const config = agentConfig(dirs, limit).replace(`command = ${JSON.stringify(process.execPath)}`, `command = ${JSON.stringify(command)}`);
    gaggle = await startGaggle(config, { env: { XDG_STATE_HOME: join(dirs.dir, "xdg-state") } });
    hold = await holdStats(gaggle.pid, command);

    const racing = [callAgents(gaggle.client, "start_agent", {}), callAgents(gaggle.client, "start_agent", {})];
    // Each start counted the live sessions, found room, and waits on the look for the agent: neither session is made yet.
    await until(
      () => hold!.held(),
      (held) => held === 2,
    );
    hold.letGo();
    const results = await Promise.all(racing);

    const started = results.filter((result) => !result.isError);
    expect(started).toHaveLength(1);
    expect(textOf(started[0]!)).toContain("Started agent session");
    const refused = failureOf(results.find((result) => result.isError)!);
    expect(refused).toEqual(failureOf(await callAgents(gaggle.client, "start_agent", {})));
    expect(refused).toMatchObject({ code: "LIMIT_REACHED", error: refusal });
  });
});
