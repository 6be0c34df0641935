// Background processes over Streamable HTTP with a token per person: max_concurrent_per_principal keeps one person
// from running every process max_concurrent allows, and a refusal names the limit and counts, without naming, the
// processes other people run; and keep_finished forgets the finished processes of whoever keeps the most.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle, bearer } from "../../helpers/gaggle-http.js";
import { waitGone } from "../../helpers/processes.js";
import { ended, processConfig, processFailure, run, status } from "./helpers.js";

const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

let gaggle: HttpGaggle | undefined;
let pids: number[] = [];
afterEach(async () => {
  await gaggle?.stop();
  gaggle = undefined;
  expect(await waitGone(pids)).toEqual([]);
  pids = [];
});

/** A gaggle over HTTP whose [virtual.process] has the keys `process`, with a client for ann and one for bob. */
async function annAndBob(process: string): Promise<{ ann: Client; bob: Client }> {
  const config = processConfig(
    `[virtual.process]\nkill_grace_ms = 300\n${process}\n`,
    'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }\n',
  );
  gaggle = await startHttpGaggle(config.text, { env: TOKENS });
  return {
    ann: await gaggle.connect({ name: "ann", ...bearer(TOKENS.GAGGLE_TEST_ANN) }),
    bob: await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) }),
  };
}

async function sleeper(client: Client): Promise<number> {
  const { pid } = await run(client, "sleep 30");
  pids.push(pid);
  return pid;
}

describe("background processes shared by two people", () => {
  it("stops ann at her share, and still runs bob's command while she holds it", async () => {
    const { ann, bob } = await annAndBob("max_concurrent = 3\nmax_concurrent_per_principal = 2");
    await sleeper(ann);
    await sleeper(ann);
    expect(await processFailure(ann, "gg_process_run", { command: "true" })).toMatchObject({
      code: "LIMIT_REACHED",
      error: 'you ("ann") hold 2 running processes, the most [virtual.process] max_concurrent_per_principal allows each principal (2)',
      hint: "wait for one of yours to end (gg_process_status lists them) or stop one with gg_process_kill, or raise [virtual.process] max_concurrent_per_principal",
    });
    const bobs = await run(bob, "echo served");
    expect((await ended(bob, bobs.pid)).status).toBe("completed");
    await sleeper(bob);
    expect(await processFailure(bob, "gg_process_run", { command: "true" })).toMatchObject({
      code: "LIMIT_REACHED",
      error: "3 running processes at once, the most [virtual.process] max_concurrent allows (3): 1 of them yours, 2 held by other principals",
    });
  });

  it("without a share, tells bob that other people run every process, naming none of them, and the key that shares them", async () => {
    const { ann, bob } = await annAndBob("max_concurrent = 2");
    const first = await sleeper(ann);
    await sleeper(ann);
    const refused = await processFailure(bob, "gg_process_run", { command: "true" });
    expect(refused).toMatchObject({
      code: "LIMIT_REACHED",
      error: "2 running processes at once, the most [virtual.process] max_concurrent allows (2): 0 of them yours, 2 held by other principals",
      hint: "wait for one to end, or raise [virtual.process] max_concurrent, or set [virtual.process] max_concurrent_per_principal so that no one principal holds them all",
    });
    expect(JSON.stringify(refused)).not.toContain("ann");
    expect(JSON.stringify(refused)).not.toContain(String(first));
  });

  it("forgets the oldest finished processes of whoever keeps the most, so ann's runs never push out bob's", async () => {
    const { ann, bob } = await annAndBob("keep_finished = 2");
    const bobs = await run(bob, "echo kept for bob");
    await ended(bob, bobs.pid);
    const anns: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { pid } = await run(ann, "true");
      await ended(ann, pid);
      anns.push(pid);
    }
    expect((await status(bob, bobs.pid)).output).toContain("kept for bob");
    expect((await status(ann, anns[2]!)).status).toBe("completed");
    for (const pid of anns.slice(0, 2)) expect((await processFailure(ann, "gg_process_status", { pid })).code).toBe("NOT_FOUND");
  });
});
