// Two client sessions of one gaggle over Streamable HTTP: each process belongs to the session that started it.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJsonResource } from "../../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { listen, type Heard } from "../../helpers/notifications.js";
import { until } from "../../helpers/poll.js";
import { httpTransportOf } from "../../helpers/raw-http.js";
import { waitGone } from "../../helpers/processes.js";
import { ended, processConfig, processFailure, processJson, run, status, type Status } from "./helpers.js";

/** pids of the process-ended notices a client heard, in order. */
function endedPids(heard: Heard): number[] {
  return heard.logs.flatMap((log) => {
    const data = log.data as { event?: string; pid?: number };
    return log.logger === "process" && data.event === "process_ended" && data.pid !== undefined ? [data.pid] : [];
  });
}

describe("process ownership over HTTP", () => {
  let gaggle: HttpGaggle;
  let alice: Client;
  let bob: Client;
  let aliceInbox: Heard;
  let bobInbox: Heard;

  beforeAll(async () => {
    gaggle = await startHttpGaggle(processConfig("[virtual.process]\nkill_grace_ms = 300\n").text);
    alice = await gaggle.connect({ name: "alice" });
    bob = await gaggle.connect({ name: "bob" });
    aliceInbox = listen(alice);
    bobInbox = listen(bob);
  });

  afterAll(() => gaggle.stop());

  it("tells the owning session that its process ended, and not the other", async () => {
    const mine = await run(alice, "echo alice");
    await until(
      () => endedPids(aliceInbox),
      (pids) => pids.includes(mine.pid),
    );
    expect(endedPids(aliceInbox)).toEqual([mine.pid]);
    expect(aliceInbox.updated).toContain(`process://${mine.pid}/log`);
    // Bob's own notice comes after Alice's was sent: had hers reached him, it would be ahead of his.
    const his = await run(bob, "echo bob");
    await until(
      () => endedPids(bobInbox),
      (pids) => pids.includes(his.pid),
    );
    expect(endedPids(bobInbox)).toEqual([his.pid]);
    expect(bobInbox.updated).not.toContain(`process://${mine.pid}/log`);
  });

  it("lets another session see a process but not kill it", async () => {
    const long = await run(alice, "sleep 30");
    const seen = await status(bob, long.pid);
    expect(seen).toMatchObject({ pid: long.pid, status: "running", mine: false });
    const bobs = await processJson<{ processes: { pid: number }[] }>(bob, "gg_process_status");
    expect(bobs.processes.map((entry) => entry.pid)).not.toContain(long.pid);
    const list = await readJsonResource<{ processes: { pid: number; mine: boolean }[] }>(bob, "process://list");
    expect(list.processes).toContainEqual(expect.objectContaining({ pid: long.pid, mine: false }));

    const refused = await processFailure(bob, "gg_process_kill", { pid: long.pid });
    expect(refused).toMatchObject({ code: "PERMISSION_DENIED", error: `process ${long.pid} belongs to a different session` });
    expect(refused.hint).toBeTruthy();
    expect((await status(alice, long.pid)).status).toBe("running");

    const killed = await processJson<Status>(alice, "gg_process_kill", { pid: long.pid });
    expect(killed).toMatchObject({ status: "killed", mine: true });
    expect(await waitGone([long.pid])).toEqual([]);
  });

  it("lets anyone kill a process whose session has gone", async () => {
    const carol = await gaggle.connect({ name: "carol" });
    const orphan = await run(carol, "sleep 30");
    await httpTransportOf(carol).terminateSession();
    await carol.close();
    const killed = await until(
      () => processJson<Status>(bob, "gg_process_kill", { pid: orphan.pid }).catch((error: unknown) => String(error)),
      (answer) => typeof answer !== "string",
    );
    expect(killed).toMatchObject({ status: "killed" });
    expect((await ended(bob, orphan.pid)).status).toBe("killed");
  });
});
