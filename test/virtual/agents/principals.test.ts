// An agent's process per principal, over Streamable HTTP with a token per person: one person's sessions share a
// process, another's run in their own, so that one person's agent crashing ends no other person's turn, and releasing
// one person's last session stops only that person's process; an edit of the agent's table stops everyone's.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle, bearer } from "../../helpers/gaggle-http.js";
import { until } from "../../helpers/poll.js";
import { isAlive, waitGone } from "../../helpers/processes.js";
import { agentConfig, agentDirs, agentsText, settled, startSession, transcript, type AgentDirs } from "./helpers.js";

const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

/** The pid get_agent_status shows for a session whose process runs. */
async function pidOf(client: Client, id: string): Promise<number> {
  const status = await agentsText(client, "get_agent_status", { session_id: id });
  const match = /^Agent: fake \(process (\d+)\)$/m.exec(status);
  if (!match) throw new Error(`no process in: ${status}`);
  return Number(match[1]);
}

describe("an agent's processes, one per principal", () => {
  let dirs: AgentDirs;
  let gaggle: HttpGaggle;
  let ann: Client;
  let bob: Client;

  beforeAll(async () => {
    dirs = agentDirs();
    const config = agentConfig(dirs).replace("[gateway]\n", '[gateway]\nauth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }\n');
    gaggle = await startHttpGaggle(config, { env: { ...TOKENS, XDG_STATE_HOME: join(dirs.dir, "xdg-state") } });
    ann = await gaggle.connect({ name: "ann", ...bearer(TOKENS.GAGGLE_TEST_ANN) });
    bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
  });

  afterAll(() => gaggle.stop());

  it("runs two people's sessions in two processes; one person's crash ends only that person's turn", async () => {
    const anns = await startSession(ann, { prompt: "whoami" });
    const annsOther = await startSession(ann, { prompt: "whoami" });
    const bobs = await startSession(bob, { prompt: "say started\nhang" });
    await settled(ann, anns, 1);
    await settled(ann, annsOther, 1);
    await until(
      () => transcript(bob, bobs),
      (text) => text.includes("[agent] started"),
    );
    const annPid = await pidOf(ann, anns);
    const bobPid = await pidOf(bob, bobs);
    expect(bobPid).not.toBe(annPid);
    // One person's sessions share a process.
    expect(await pidOf(ann, annsOther)).toBe(annPid);
    expect(await transcript(ann, anns)).toContain(`[agent] pid ${annPid} turn 1`);

    // Ann's agent exits in the middle of her turn: her turn fails, her other session hears its process ended.
    await agentsText(ann, "prompt_agent", { session_id: anns, prompt: "crash boom" });
    expect(await settled(ann, anns, 2)).toMatch(/^ {2}2\. "crash boom" \(failed in .*: agent "fake"'s process ended during the turn \(exit code 3/m);
    await until(
      () => transcript(ann, annsOther),
      (text) => text.includes("[gaggle] the agent's process ended (exit code 3"),
    );
    expect(await waitGone([annPid])).toEqual([]);

    // Bob's turn still runs in his own process, which answers his cancel and his next prompt in the same ACP session.
    expect(isAlive(bobPid)).toBe(true);
    expect(await agentsText(bob, "get_agent_status", { session_id: bobs })).toMatch(/^Status: working on prompt 1 /m);
    await agentsText(bob, "cancel_agent_turn", { session_id: bobs });
    expect(await settled(bob, bobs, 1)).toMatch(/^ {2}1\. .* \(cancelled in .*: stop reason: cancelled\)$/m);
    await agentsText(bob, "prompt_agent", { session_id: bobs, prompt: "whoami" });
    expect(await settled(bob, bobs, 2)).toMatch(/^ {2}2\. "whoami" \(completed in /m);
    const bobsText = await transcript(bob, bobs);
    expect(bobsText).toMatch(new RegExp(`\\[agent\\] pid ${bobPid} turn 2 session fake-${bobPid}-`));
    expect(bobsText).not.toContain("process ended");
    expect(bobsText).not.toContain("loaded");

    // Ann's session goes on in a new process of hers (session/load), not in Bob's.
    await agentsText(ann, "prompt_agent", { session_id: anns, prompt: "whoami" });
    expect(await settled(ann, anns, 3)).toMatch(/^ {2}3\. "whoami" \(completed in /m);
    const annAgain = await pidOf(ann, anns);
    expect([annPid, bobPid]).not.toContain(annAgain);
    const annsText = await transcript(ann, anns);
    expect(annsText).toMatch(/\[gaggle\] ACP session fake-\d+-\d+ loaded/);
    // The fake counts a turn once it ends: the crashed one is not its second.
    expect(annsText).toContain(`[agent] pid ${annAgain} turn 2 session fake-${annPid}-`);

    // Releasing Ann's sessions stops her process only.
    await agentsText(ann, "release_agent", { session_id: anns });
    await agentsText(ann, "release_agent", { session_id: annsOther });
    expect(await waitGone([annAgain])).toEqual([]);
    expect(isAlive(bobPid)).toBe(true);
    await agentsText(bob, "prompt_agent", { session_id: bobs, prompt: "whoami" });
    expect(await settled(bob, bobs, 3)).toMatch(/^ {2}3\. "whoami" \(completed in /m);
    expect(await transcript(bob, bobs)).toContain(`[agent] pid ${bobPid} turn 3`);
  });

  it("stops every person's process of an agent whose table changed, releasing their sessions", async () => {
    const anns = await startSession(ann, { prompt: "whoami" });
    const bobs = await startSession(bob, { prompt: "whoami" });
    await settled(ann, anns, 1);
    await settled(bob, bobs, 1);
    const pids = [await pidOf(ann, anns), await pidOf(bob, bobs)];
    expect(pids[0]).not.toBe(pids[1]);
    writeFileSync(gaggle.config, readFileSync(gaggle.config, "utf8").replace("[agents.fake]\n", '[agents.fake]\npermission = "deny"\n'));
    for (const [client, id] of [
      [ann, anns],
      [bob, bobs],
    ] as const) {
      await until(
        () => agentsText(client, "get_agent_status", { session_id: id }),
        (text) => text.includes("Status: released ([agents.fake] was changed in the config)"),
      );
    }
    expect(await waitGone(pids)).toEqual([]);
  });
});
