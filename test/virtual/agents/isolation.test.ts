// Agent sessions over Streamable HTTP with a token per person: a session is its principal's, from any of its client
// sessions, and another principal can neither see, prompt, cancel, release nor read it; a permission question
// reaches the client session that sent the prompt on its own stream after the call has returned.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf } from "../../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle, bearer } from "../../helpers/gaggle-http.js";
import { agentConfig, agentDirs, agentsText, callAgents, settled, startSession, transcript, type AgentDirs } from "./helpers.js";

const TOKENS = { GAGGLE_TEST_ALICE: "alice-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

describe("agent sessions over HTTP, with a token per person", () => {
  let dirs: AgentDirs;
  let gaggle: HttpGaggle;
  let alice: Client;
  let aliceAgain: Client;
  let bob: Client;
  let id: string;

  beforeAll(async () => {
    dirs = agentDirs();
    const config = agentConfig(dirs).replace(
      "[gateway]\n",
      '[gateway]\nauth_tokens = { alice = "${GAGGLE_TEST_ALICE}", bob = "${GAGGLE_TEST_BOB}" }\n',
    );
    gaggle = await startHttpGaggle(config, { env: { ...TOKENS, XDG_STATE_HOME: join(dirs.dir, "xdg-state") } });
    alice = await gaggle.connect({ name: "alice", ...bearer(TOKENS.GAGGLE_TEST_ALICE), client: { capabilities: { elicitation: {} } } });
    alice.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { decision: "yes" } }));
    aliceAgain = await gaggle.connect({ name: "alice-again", ...bearer(TOKENS.GAGGLE_TEST_ALICE) });
    bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
    id = await startSession(alice, { prompt: `say hello alice\nwrite ${join(dirs.root, "alice.txt")} written for alice` });
    await settled(alice, id, 1);
  });

  afterAll(() => gaggle.stop());

  it("asks the permission question on the prompting client's own stream, after start_agent returned", async () => {
    expect(await transcript(alice, id)).toContain("[permission] the person chose Allow once (allow_once)");
    expect(readFileSync(join(dirs.root, "alice.txt"), "utf8")).toBe("written for alice");
  });

  it("shows the session to its principal from another of its client sessions", async () => {
    expect(await agentsText(aliceAgain, "list_agent_sessions", {})).toContain(id);
    expect(await transcript(aliceAgain, id)).toContain("[agent] hello alice");
  });

  it("hides it from another principal: not listed, and every tool that names it answers NOT_FOUND", async () => {
    expect(await agentsText(bob, "list_agent_sessions", {})).toBe("No agent sessions.");
    expect(await agentsText(bob, "get_agent_status", {})).toBe("No agent sessions.");
    for (const [tool, args] of [
      ["get_agent_output", { session_id: id }],
      ["get_agent_status", { session_id: id }],
      ["prompt_agent", { session_id: id, prompt: "say hijacked" }],
      ["cancel_agent_turn", { session_id: id }],
      ["release_agent", { session_id: id }],
    ] as const) {
      expect(failureOf(await callAgents(bob, tool, args)), tool).toMatchObject({ code: "NOT_FOUND", error: `no agent session "${id}" of yours` });
    }
    await expect(bob.readResource({ uri: `agents://sessions/${id}/transcript` })).rejects.toThrow(/not found/i);
    const read = await alice.readResource({ uri: `agents://sessions/${id}/transcript` });
    expect(read.contents[0]).toMatchObject({ mimeType: "text/plain", text: expect.stringContaining("[agent] hello alice") });
    expect(await transcript(alice, id)).not.toContain("hijacked");
    expect(await agentsText(alice, "get_agent_status", { session_id: id })).toContain("Status: idle");
  });

  it("lets only its principal follow its transcript: another principal's subscription is refused as its read is", async () => {
    const uri = `agents://sessions/${id}/transcript`;
    await expect(bob.subscribeResource({ uri })).rejects.toThrow(/not found/i);
    await expect(aliceAgain.subscribeResource({ uri })).resolves.toEqual({});
    await aliceAgain.unsubscribeResource({ uri });
  });

  it('close_child_session("agents") by another person releases only that person\'s sessions', async () => {
    const bobs = await startSession(bob, { prompt: "say hello bob" });
    await settled(bob, bobs, 1);
    expect((await bob.callTool({ name: "close_child_session", arguments: { server_id: "agents" } })).isError).toBeFalsy();
    expect(await agentsText(bob, "get_agent_status", { session_id: bobs })).toContain("Status: released (the agents child was closed)");
    expect(await agentsText(alice, "get_agent_status", { session_id: id })).toContain("Status: idle");
    await agentsText(alice, "prompt_agent", { session_id: id, prompt: "say still here" });
    await settled(alice, id, 2);
    expect(await transcript(alice, id)).toContain("[agent] still here");
  });
});

describe('agent sessions over HTTP with a token per person and visibility = "all"', () => {
  let dirs: AgentDirs;
  let gaggle: HttpGaggle;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    dirs = agentDirs();
    const config = agentConfig(dirs).replace(
      "[gateway]\n",
      '[gateway]\nauth_tokens = { alice = "${GAGGLE_TEST_ALICE}", bob = "${GAGGLE_TEST_BOB}" }\nvisibility = "all"\n',
    );
    gaggle = await startHttpGaggle(config, { env: { ...TOKENS, XDG_STATE_HOME: join(dirs.dir, "xdg-state") } });
    alice = await gaggle.connect({ name: "alice", ...bearer(TOKENS.GAGGLE_TEST_ALICE) });
    bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
  });

  afterAll(() => gaggle.stop());

  it("lets another person list and read a session, and never prompt, cancel or release it", async () => {
    const id = await startSession(alice, { prompt: "say hello alice" });
    await settled(alice, id, 1);
    expect(await agentsText(bob, "list_agent_sessions", {})).toContain(id);
    expect(await transcript(bob, id)).toContain("[agent] hello alice");
    for (const [tool, args] of [
      ["prompt_agent", { session_id: id, prompt: "say hijacked" }],
      ["cancel_agent_turn", { session_id: id }],
      ["release_agent", { session_id: id }],
    ] as const) {
      expect(failureOf(await callAgents(bob, tool, args)), tool).toMatchObject({
        code: "PERMISSION_DENIED",
        error: `agent session ${id} belongs to another client ("alice"), not to you ("bob")`,
      });
    }
    expect(await agentsText(alice, "get_agent_status", { session_id: id })).toContain("Status: idle");
  });
});
