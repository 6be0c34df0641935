// An agent's live sessions over Streamable HTTP with a token per person: max_active_per_principal keeps one person
// from holding every session max_active allows, and a refusal names the limit and counts, without naming, the
// sessions other people hold; and max_sessions forgets the released sessions of whoever keeps the most.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { failureOf } from "../../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle, bearer } from "../../helpers/gaggle-http.js";
import { agentConfig, agentDirs, agentsText, callAgents, startSession, transcript } from "./helpers.js";

const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

let gaggle: HttpGaggle | undefined;
afterEach(async () => {
  await gaggle?.stop();
  gaggle = undefined;
});

/** A gaggle over HTTP whose [agents.fake] has the keys `agent`, with a client for ann and one for bob. */
async function annAndBob(agent: string): Promise<{ ann: Client; bob: Client; root: string }> {
  const dirs = agentDirs();
  const config = agentConfig(dirs, agent).replace(
    "[gateway]\n",
    '[gateway]\nauth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }\n',
  );
  gaggle = await startHttpGaggle(config, { env: { ...TOKENS, XDG_STATE_HOME: join(dirs.dir, "xdg-state") } });
  const ann = await gaggle.connect({ name: "ann", ...bearer(TOKENS.GAGGLE_TEST_ANN) });
  const bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
  return { ann, bob, root: dirs.root };
}

describe("an agent's live sessions shared by two people", () => {
  it("stops ann at her share, and still starts bob's session while she holds it", async () => {
    const { ann, bob } = await annAndBob("max_active = 3\nmax_active_per_principal = 2");
    await startSession(ann, {});
    await startSession(ann, {});
    expect(failureOf(await callAgents(ann, "start_agent", {}))).toMatchObject({
      code: "LIMIT_REACHED",
      error: 'you ("ann") hold 2 live sessions of agent "fake", the most [agents.fake] max_active_per_principal allows each principal (2)',
      hint: "release one of yours with release_agent (list_agent_sessions lists them), or raise [agents.fake] max_active_per_principal",
    });
    await startSession(bob, {});
    const full = failureOf(await callAgents(bob, "start_agent", {}));
    expect(full).toMatchObject({
      code: "LIMIT_REACHED",
      error: `3 live sessions of agent "fake" at once, the most [agents.fake] max_active allows (3): 1 of them yours, 2 held by other principals`,
      hint: "release one of yours with release_agent (list_agent_sessions lists them), or raise [agents.fake] max_active",
    });
  });

  it("holds ann to her share when she starts several sessions at once, each waiting on her roots", async () => {
    const { bob, root } = await annAndBob("max_active = 4\nmax_active_per_principal = 2");
    // A client with roots is asked for them before each session opens: the starts overlap there.
    const ann = await gaggle!.connect({ name: "ann-roots", ...bearer(TOKENS.GAGGLE_TEST_ANN), client: { capabilities: { roots: {} } } });
    ann.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: pathToFileURL(root).href }] }));
    const results = await Promise.all([1, 2, 3, 4].map(() => callAgents(ann, "start_agent", {})));
    expect(results.filter((result) => !result.isError)).toHaveLength(2);
    for (const refused of results.filter((result) => result.isError)) {
      expect(failureOf(refused)).toMatchObject({
        code: "LIMIT_REACHED",
        error: expect.stringContaining("max_active_per_principal allows each principal (2)"),
      });
    }
    await startSession(bob, {});
  });

  it("without a share, tells bob that other people hold every session, naming none of them, and the key that shares them", async () => {
    const { ann, bob } = await annAndBob("max_active = 2");
    const first = await startSession(ann, {});
    await startSession(ann, {});
    const refused = failureOf(await callAgents(bob, "start_agent", {}));
    expect(refused).toMatchObject({
      code: "LIMIT_REACHED",
      error: `2 live sessions of agent "fake" at once, the most [agents.fake] max_active allows (2): 0 of them yours, 2 held by other principals`,
      hint: "wait for one to end, or raise [agents.fake] max_active, or set [agents.fake] max_active_per_principal so that no one principal holds them all",
    });
    expect(JSON.stringify(refused)).not.toContain("ann");
    expect(JSON.stringify(refused)).not.toContain(first);
  });

  it("forgets the released sessions of whoever keeps the most, so ann's sessions never push out bob's transcript", async () => {
    const { ann, bob } = await annAndBob("max_sessions = 2");
    const bobs = await startSession(bob, {});
    await agentsText(bob, "release_agent", { session_id: bobs });
    const anns: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await startSession(ann, {});
      await agentsText(ann, "release_agent", { session_id: id });
      anns.push(id);
    }
    expect(await transcript(bob, bobs)).toBeTruthy();
    expect(await transcript(ann, anns[2]!)).toBeTruthy();
    for (const id of anns.slice(0, 2)) expect(failureOf(await callAgents(ann, "get_agent_output", { session_id: id })).code).toBe("NOT_FOUND");
  });
});
