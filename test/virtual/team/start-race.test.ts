// Two members added at once for the last place their owner has: both adds pass the first count (of goslings, or of
// the agent's live sessions), then both wait while the member's command is looked for; the count is taken again where
// the gosling or session is made, so one member starts and the other add is refused as an add past the limit always is.
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { failureOf } from "../../helpers/gaggle.js";
import { holdStats, type StatHold } from "../../helpers/held-stat.js";
import { until } from "../../helpers/poll.js";
import { fakeAgentTable } from "../agents/helpers.js";
import { FAKE_GOOSE } from "../goose/helpers.js";
import { startTeamGaggle, type TeamGaggle } from "./helpers.js";

let team: TeamGaggle | undefined;
let hold: StatHold | undefined;
afterEach(async () => {
  hold?.letGo();
  hold = undefined;
  await team?.close();
  team = undefined;
});

describe("two members added at once for their owner's last place", () => {
  it.each([
    {
      kind: "gosling",
      config: (dir: string, command: string) => {
        symlinkSync(FAKE_GOOSE, command);
        return { goose: `command = ${JSON.stringify(command)}\nmax_total = 1` };
      },
      add: {},
      refusal: "1 gosling not released at once, the most [virtual.goose] max_total allows (1)",
    },
    {
      kind: "agent session",
      config: (dir: string, command: string) => {
        symlinkSync(process.execPath, command);
        const table = fakeAgentTable("fake", dir, {}).replace(
          `command = ${JSON.stringify(process.execPath)}`,
          `command = ${JSON.stringify(command)}`,
        );
        return { team: `\n${table}\nmax_active = 1` };
      },
      add: { agent: "fake" },
      refusal: '1 live session of agent "fake" at once, the most [agents.fake] max_active allows (1)',
    },
  ])("of $kind members: one starts, and the other add is refused as a later add is", async ({ config, add, refusal }) => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-team-"));
    // The member's command under a path of its own, which only the look for it before the member starts stats.
    const command = join(dir, "member-command");
    team = await startTeamGaggle({ dir, ...config(dir, command) });
    hold = await holdStats(team.pid, command);
    const adding = (title: string) => team!.call("gg_team_manage", { team_id: "t1", title, ...add });

    const racing = [adding("First"), adding("Second")];
    // Each add counted its owner's work, found room, and waits on the look for the command: no member has started.
    await until(
      () => hold!.held(),
      (held) => held === 2,
    );
    hold.letGo();
    const results = await Promise.all(racing);

    expect(results.filter((result) => !result.isError)).toHaveLength(1);
    const refused = failureOf(results.find((result) => result.isError)!);
    expect(refused).toEqual(failureOf(await adding("Third")));
    expect(refused).toMatchObject({ code: "LIMIT_REACHED", error: refusal });
    expect((await team.status("t1")).members).toHaveLength(1);
  });
});
