// Descendants that leave their process group (a `setsid` grandchild, a double-forked daemon) go with the child
// that started them, whether a stdio child or a gg_process_run command, and however gaggle ends, even after its
// watchdog was killed.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { fixtureChild } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";
import { carrying, groupOf, isAlive, killCarrying, waitGone, watchdogsOf } from "../../helpers/processes.js";
import { ended, run, status } from "../../virtual/process/helpers.js";

const CONFIG = `[gateway]\nshutdown_grace_ms = 300\n\n[virtual.process]\nkill_grace_ms = 300\n
${fixtureChild("detached", "detached.mjs")}\n${fixtureChild("stubborn", "stubborn.mjs")}`;

/** A `setsid` sleep and a double-forked daemon sleep, each printing its pid. */
const DETACH = ['setsid sleep 301 > /dev/null 2>&1 & echo "setsid $!"', "setsid sh -c 'sleep 301 > /dev/null 2>&1 & echo \"daemon $!\"'"].join("\n");

interface Started {
  server: string;
  /** The child's own process, which leads its group. */
  leader: number;
  /** Its descendants outside that group. */
  detached: number[];
}

/** Every process a test's gaggle starts carries this mark, so the clean-up finds what the test left, wherever it went. */
let mark = "";
let gaggle: RunningGaggle | undefined;

async function start(): Promise<RunningGaggle> {
  mark = `GAGGLE_TEST_MARK=${randomUUID()}`;
  const [name, value] = mark.split("=") as [string, string];
  gaggle = await startGaggle(CONFIG, { env: { [name]: value } });
  return gaggle;
}

afterEach(async () => {
  await gaggle?.close().catch(() => {});
  killCarrying(mark);
  gaggle = undefined;
});

async function fromStdioChild(gaggle: RunningGaggle): Promise<Started> {
  const answer = await gaggle.meta("execute_child_tool", { server_id: "detached", tool_name: "pids" });
  const pids = JSON.parse(textOf(answer)) as { pid: number; setsid_pid: number; daemon_pid: number };
  return { server: "detached", leader: pids.pid, detached: [pids.setsid_pid, pids.daemon_pid] };
}

/** Runs `command` through gg_process_run and reads the two pids DETACH prints. */
async function fromProcessRun(gaggle: RunningGaggle, command: string): Promise<Started> {
  const started = await run(gaggle.client, command);
  const { output } = await until(
    () => status(gaggle.client, started.pid),
    (s) => /setsid \d+\n(.|\n)*daemon \d+/.test(s.output),
  );
  const pids = ["setsid", "daemon"].map((word) => Number(new RegExp(`${word} (\\d+)`).exec(output)?.[1]));
  return { server: "process", leader: started.pid, detached: pids };
}

const STARTERS = {
  "a stdio child": fromStdioChild,
  "a gg_process_run command": (gaggle: RunningGaggle) => fromProcessRun(gaggle, `${DETACH}\nexec sleep 300`),
};

/**
 * The detached processes are running and have left the leader's group: signals to the group miss them. A pid is
 * known once its process is forked, and `setsid` moves the process out of the group only after its exec: leaving
 * is awaited (a loaded machine may not have run it yet), and a process still in the group after the bound fails the
 * test with the groups last read.
 */
async function expectDetached(started: Started): Promise<void> {
  expect(started.detached.every(isAlive)).toBe(true);
  const groups = await until(
    () => started.detached.map(groupOf),
    (groups) => !groups.includes(started.leader),
  );
  expect(groups).not.toContain(started.leader);
  expect(started.detached.every(isAlive)).toBe(true);
}

describe("descendants that left the process group", () => {
  for (const [who, startFrom] of Object.entries(STARTERS)) {
    describe(`of ${who}`, () => {
      it("are gone after close_child_session", async () => {
        const gaggle = await start();
        const started = await startFrom(gaggle);
        await expectDetached(started);
        await gaggle.metaJson("close_child_session", { server_id: started.server });
        expect(await waitGone([started.leader, ...started.detached])).toEqual([]);
      });

      it("are gone when gaggle's stdin closes", async () => {
        const gaggle = await start();
        const started = await startFrom(gaggle);
        await expectDetached(started);
        await gaggle.close();
        expect(await waitGone([gaggle.pid, started.leader, ...started.detached])).toEqual([]);
        expect(await waitGone(carrying(mark))).toEqual([]);
      });

      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        it(`are gone when gaggle gets ${signal}`, async () => {
          const gaggle = await start();
          const started = await startFrom(gaggle);
          await expectDetached(started);
          process.kill(gaggle.pid, signal);
          expect(await waitGone([gaggle.pid, started.leader, ...started.detached])).toEqual([]);
          expect(await waitGone(carrying(mark))).toEqual([]);
        });
      }
    });
  }

  it("are gone once the gg_process_run command that started them has exited", async () => {
    const gaggle = await start();
    const started = await fromProcessRun(gaggle, DETACH);
    expect((await ended(gaggle.client, started.leader)).status).toBe("completed");
    expect(await waitGone(started.detached)).toEqual([]);
  });
});

describe("a watchdog that is killed", () => {
  it("is started again with everything it must kill: once gaggle is SIGKILLed, every child and descendant is gone", async () => {
    const gaggle = await start();
    // A group-member grandchild (stubborn's ignores SIGTERM), and descendants outside the group of both kinds of child.
    await gaggle.meta("execute_child_tool", { server_id: "stubborn", tool_name: "pids" });
    const started = [await fromStdioChild(gaggle), await STARTERS["a gg_process_run command"](gaggle)];
    for (const child of started) await expectDetached(child);
    const [first, second] = await until(
      () => watchdogsOf(gaggle.pid),
      (pids) => pids.length === 2,
    );
    process.kill(first!, "SIGKILL");
    const replaced = await until(
      () => watchdogsOf(gaggle.pid),
      (pids) => pids.length === 2 && !pids.includes(first!),
    );
    expect(replaced).toContain(second);
    // The new watchdog can be seen before the line that tells of it reaches the test.
    await until(
      () => gaggle.stderr(),
      (text) => text.includes("watchdog exited; starting a new one"),
    );
    const all = carrying(mark).filter((pid) => pid !== gaggle.pid);
    expect(all).toEqual(expect.arrayContaining(started.flatMap((child) => [child.leader, ...child.detached])));
    process.kill(gaggle.pid, "SIGKILL");
    expect(await waitGone([gaggle.pid, ...all])).toEqual([]);
    expect(await waitGone(carrying(mark))).toEqual([]);
  });
});
