// Client sessions of one gaggle over Streamable HTTP: a process belongs to the principal that started it (the
// token it sent), from any of its sessions; a session belongs to the token that opened it.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJsonResource } from "../../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle, bearer } from "../../helpers/gaggle-http.js";
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

const TOKENS = { GAGGLE_TEST_ALICE: "alice-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

describe('process ownership over HTTP, with a token per person and visibility = "all"', () => {
  let gaggle: HttpGaggle;
  let alice: Client;
  let bob: Client;
  let aliceInbox: Heard;
  let bobInbox: Heard;

  beforeAll(async () => {
    const config = processConfig(
      "[virtual.process]\nkill_grace_ms = 300\n",
      'auth_tokens = { alice = "${GAGGLE_TEST_ALICE}", bob = "${GAGGLE_TEST_BOB}" }\nvisibility = "all"\n',
    );
    gaggle = await startHttpGaggle(config.text, { env: TOKENS });
    alice = await gaggle.connect({ name: "alice", ...bearer(TOKENS.GAGGLE_TEST_ALICE) });
    bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
    aliceInbox = listen(alice);
    bobInbox = listen(bob);
  });

  afterAll(() => gaggle.stop());

  it("tells the session that started a process that it ended, and not the other", async () => {
    const mine = await run(alice, "echo alice");
    await until(
      () => endedPids(aliceInbox),
      (pids) => pids.includes(mine.pid),
    );
    expect(endedPids(aliceInbox)).toEqual([mine.pid]);
    expect(aliceInbox.updated).toContain(`process://${mine.pid}/log`);
    // Claude Code hears it as a channel event too: the sentence, and the notice's plain fields as attributes.
    expect(alice.getServerCapabilities()?.experimental).toEqual({ "claude/channel": {} });
    expect(aliceInbox.channels).toContainEqual({
      content: expect.stringMatching(new RegExp(`^process ${mine.pid} completed \\(exit code 0\\)`)),
      meta: expect.objectContaining({ source: "process", event: "process_ended", pid: String(mine.pid), status: "completed" }),
    });
    // Bob's own notice comes after Alice's was sent: had hers reached him, it would be ahead of his.
    const his = await run(bob, "echo bob");
    await until(
      () => endedPids(bobInbox),
      (pids) => pids.includes(his.pid),
    );
    expect(endedPids(bobInbox)).toEqual([his.pid]);
    expect(bobInbox.channels.map((event) => event.meta.pid)).toEqual([String(his.pid)]);
    expect(bobInbox.updated).not.toContain(`process://${mine.pid}/log`);
  });

  it("lets another person see a process, listed as not theirs, but not kill it, with a hint true to the case", async () => {
    const long = await run(alice, "sleep 30", { timeout_ms: 0 });
    expect(await status(bob, long.pid)).toMatchObject({ pid: long.pid, status: "running", owned: false });
    const bobs = await processJson<{ processes: { pid: number; owned: boolean }[] }>(bob, "gg_process_status");
    expect(bobs.processes).toContainEqual(expect.objectContaining({ pid: long.pid, owned: false }));
    const list = await readJsonResource<{ processes: { pid: number; owned: boolean }[] }>(bob, "process://list");
    expect(list.processes).toContainEqual(expect.objectContaining({ pid: long.pid, owned: false }));

    const refused = await processFailure(bob, "gg_process_kill", { pid: long.pid });
    expect(refused).toMatchObject({
      code: "PERMISSION_DENIED",
      error: `process ${long.pid} belongs to another client ("alice"), not to you ("bob")`,
    });
    expect(refused.hint).toContain("it has no timeout: it runs until it ends or gaggle stops");
    expect((await status(alice, long.pid)).status).toBe("running");

    const killed = await processJson<Status>(alice, "gg_process_kill", { pid: long.pid });
    expect(killed).toMatchObject({ status: "killed", owned: true });
    expect(await waitGone([long.pid])).toEqual([]);
  });

  it("lets the same person kill a process from a new session once the first has gone, and nobody else", async () => {
    const first = await gaggle.connect({ name: "alice-first", ...bearer(TOKENS.GAGGLE_TEST_ALICE) });
    const left = await run(first, "sleep 30");
    await httpTransportOf(first).terminateSession();
    await first.close();
    const refused = await processFailure(bob, "gg_process_kill", { pid: left.pid });
    expect(refused).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(refused.hint).toMatch(/it is killed at its timeout, \d+ ms after it started/);

    const again = await gaggle.connect({ name: "alice-again", ...bearer(TOKENS.GAGGLE_TEST_ALICE) });
    expect(await status(again, left.pid)).toMatchObject({ status: "running", owned: true });
    expect(await processJson<Status>(again, "gg_process_kill", { pid: left.pid })).toMatchObject({ status: "killed" });
    expect((await ended(again, left.pid)).status).toBe("killed");
  });

  it("binds a session to the token that opened it: another token, or none, reaches nothing with its id", async () => {
    const sessionId = httpTransportOf(alice).sessionId!;
    const ping = (authorization?: string) =>
      fetch(gaggle.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25",
          ...(authorization && { authorization }),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
    expect((await ping(`Bearer ${TOKENS.GAGGLE_TEST_BOB}`)).status).toBe(404);
    expect((await ping()).status).toBe(401);
    const deleted = await fetch(gaggle.url, {
      method: "DELETE",
      headers: { "mcp-session-id": sessionId, authorization: `Bearer ${TOKENS.GAGGLE_TEST_BOB}` },
    });
    expect(deleted.status).toBe(404);
    // Alice's session is still hers.
    expect((await ping(`Bearer ${TOKENS.GAGGLE_TEST_ALICE}`)).status).toBe(200);
  });
});

describe("processes over HTTP with a token per person, by default", () => {
  let gaggle: HttpGaggle;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    const config = processConfig(
      "[virtual.process]\nkill_grace_ms = 300\n",
      'auth_tokens = { alice = "${GAGGLE_TEST_ALICE}", bob = "${GAGGLE_TEST_BOB}" }\n',
    );
    gaggle = await startHttpGaggle(config.text, { env: TOKENS });
    alice = await gaggle.connect({ name: "alice", ...bearer(TOKENS.GAGGLE_TEST_ALICE) });
    bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
  });

  afterAll(() => gaggle.stop());

  it("shows a person only their own processes: another's command line and output are not there for them", async () => {
    const secret = await run(alice, "echo alice-secret-output; sleep 30", { timeout_ms: 0 });
    const listed = await processJson<{ processes: { pid: number; command: string }[] }>(bob, "gg_process_status");
    expect(listed.processes.map((entry) => entry.pid)).not.toContain(secret.pid);
    expect(JSON.stringify(listed)).not.toContain("alice-secret");
    const list = await readJsonResource<{ processes: { pid: number }[] }>(bob, "process://list");
    expect(list.processes.map((entry) => entry.pid)).not.toContain(secret.pid);
    for (const [tool, args] of [
      ["gg_process_status", { pid: secret.pid }],
      ["gg_process_kill", { pid: secret.pid }],
    ] as const) {
      expect(await processFailure(bob, tool, args)).toMatchObject({ code: "NOT_FOUND", error: expect.stringContaining(`no process ${secret.pid}`) });
    }
    await expect(bob.readResource({ uri: `process://${secret.pid}/log` })).rejects.toThrow(/not found/i);
    expect(await status(alice, secret.pid)).toMatchObject({ status: "running", owned: true });
    await processJson(alice, "gg_process_kill", { pid: secret.pid });
  });

  it("tells a subscriber of process://list of its own processes' changes, not of another person's", async () => {
    const aliceHeard = listen(alice);
    const bobHeard = listen(bob);
    await alice.subscribeResource({ uri: "process://list" });
    await bob.subscribeResource({ uri: "process://list" });
    const hers = await run(alice, "sleep 30", { timeout_ms: 0 });
    await processJson(alice, "gg_process_kill", { pid: hers.pid });
    // Alice hears her start and her end; by then any update of hers meant for Bob is on his stream too.
    await until(
      async () => aliceHeard.updated.length,
      (count) => count >= 2,
      10_000,
    );
    const his = await run(bob, "sleep 30", { timeout_ms: 0 });
    await until(
      async () => bobHeard.updated.length,
      (count) => count >= 1,
      10_000,
    );
    expect(bobHeard.updated).toEqual(["process://list"]);
    await processJson(bob, "gg_process_kill", { pid: his.pid });
    // His process's end: its list update, and its log's update as the notice to the session that started it.
    await until(
      async () => bobHeard.updated.length,
      (count) => count >= 3,
      10_000,
    );
    expect(bobHeard.updated.sort()).toEqual([`process://${his.pid}/log`, "process://list", "process://list"]);
    await alice.unsubscribeResource({ uri: "process://list" });
    await bob.unsubscribeResource({ uri: "process://list" });
  });

  it('close_child_session("process") by one person ends their own processes and no one else\'s', async () => {
    const hers = await run(alice, "sleep 30", { timeout_ms: 0 });
    const his = await run(bob, "sleep 30", { timeout_ms: 0 });
    const closed = await bob.callTool({ name: "close_child_session", arguments: { server_id: "process" } });
    expect(closed.isError).toBeFalsy();
    expect((await status(bob, his.pid)).status).toBe("killed");
    expect(await status(alice, hers.pid)).toMatchObject({ status: "running" });
    await processJson(alice, "gg_process_kill", { pid: hers.pid });
    expect(await waitGone([hers.pid, his.pid])).toEqual([]);
  });
});

describe("process ownership over HTTP without a token", () => {
  let gaggle: HttpGaggle;
  afterAll(() => gaggle?.stop());

  it("makes every client the local user: a process started from a session nobody closed can be killed from the next", async () => {
    gaggle = await startHttpGaggle(processConfig("[virtual.process]\nkill_grace_ms = 300\n").text);
    const inspector = await gaggle.connect({ name: "inspector" });
    const left = await run(inspector, "sleep 30");
    const next = await gaggle.connect({ name: "next" });
    const listed = await processJson<{ processes: { pid: number; owned: boolean }[] }>(next, "gg_process_status");
    expect(listed.processes).toContainEqual(expect.objectContaining({ pid: left.pid, owned: true }));
    expect(await processJson<Status>(next, "gg_process_kill", { pid: left.pid })).toMatchObject({ status: "killed", owned: true });
    expect(await waitGone([left.pid])).toEqual([]);
  });
});
