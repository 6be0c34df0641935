// Goslings over Streamable HTTP with a token per person: max_active_per_principal and max_total_per_principal keep
// one person from holding every gosling max_active and max_total allow, and a refusal names the limit and counts,
// without naming, the goslings other people hold; and released goslings past max_total are forgotten from whoever
// keeps the most.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle, bearer } from "../../helpers/gaggle-http.js";
import { textOf } from "../../helpers/gaggle.js";
import { failureOf, gooseConfig, idOf } from "./helpers.js";

const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

let gaggle: HttpGaggle | undefined;
afterEach(async () => {
  await gaggle?.stop();
  gaggle = undefined;
});

/** A gaggle over HTTP whose [virtual.goose] runs the fake with the keys `goose`, with a client for ann and one for bob. */
async function annAndBob(goose: string): Promise<{ ann: Client; bob: Client }> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
  const config = gooseConfig(dir, goose, 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }');
  gaggle = await startHttpGaggle(config, { env: { ...TOKENS, XDG_STATE_HOME: join(dir, "xdg-state") } });
  return {
    ann: await gaggle.connect({ name: "ann", ...bearer(TOKENS.GAGGLE_TEST_ANN) }),
    bob: await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) }),
  };
}

async function runGoose(client: Client, prompt: string): Promise<CallToolResult> {
  return (await client.callTool({
    name: "execute_child_tool",
    arguments: { server_id: "goose", tool_name: "run_goose", arguments: { prompt } },
  })) as CallToolResult;
}

async function started(client: Client, prompt: string): Promise<string> {
  return idOf(textOf(await runGoose(client, prompt)));
}

describe("goslings shared by two people", () => {
  it("stops ann at her share of goslings held, and still starts bob's while she holds it", async () => {
    const { ann, bob } = await annAndBob("max_total = 3\nmax_total_per_principal = 2");
    await started(ann, "one");
    await started(ann, "two");
    expect(failureOf(await runGoose(ann, "three"))).toMatchObject({
      code: "LIMIT_REACHED",
      error: 'you ("ann") hold 2 goslings not released, the most [virtual.goose] max_total_per_principal allows each principal (2)',
      hint: "release the goslings you are done with (release_gosling, terminate_all_goslings), or raise [virtual.goose] max_total_per_principal",
    });
    await started(bob, "bob's");
    expect(failureOf(await runGoose(bob, "another"))).toMatchObject({
      code: "LIMIT_REACHED",
      error: "3 goslings not released at once, the most [virtual.goose] max_total allows (3): 1 of them yours, 2 held by other principals",
    });
  });

  it("stops ann at her share of goslings working, and still starts bob's while hers works", async () => {
    const { ann, bob } = await annAndBob("max_active = 2\nmax_active_per_principal = 1");
    await started(ann, "[hang]");
    expect(failureOf(await runGoose(ann, "[hang]"))).toMatchObject({
      code: "LIMIT_REACHED",
      error: 'you ("ann") hold 1 gosling working, the most [virtual.goose] max_active_per_principal allows each principal (1)',
      hint: "wait for one of yours to finish (get_gosling_status) or release one (release_gosling), or raise [virtual.goose] max_active_per_principal",
    });
    await started(bob, "[hang]");
  });

  it("without a share, tells bob that other people's goslings work, naming none of them, and the key that shares them", async () => {
    const { ann, bob } = await annAndBob("max_active = 1");
    const hers = await started(ann, "[hang]");
    const refused = failureOf(await runGoose(bob, "mine"));
    expect(refused).toMatchObject({
      code: "LIMIT_REACHED",
      error: "1 gosling working at once, the most [virtual.goose] max_active allows (1): 0 of them yours, 1 held by other principals",
      hint: "wait for one to end, or raise [virtual.goose] max_active, or set [virtual.goose] max_active_per_principal so that no one principal holds them all",
    });
    expect(JSON.stringify(refused)).not.toContain("ann");
    expect(JSON.stringify(refused)).not.toContain(hers);
  });

  it("forgets the released goslings of whoever keeps the most, so ann's never push out bob's transcript", async () => {
    const { ann, bob } = await annAndBob("max_total = 2");
    const goose = (client: Client, tool: string, id: string) =>
      client.callTool({
        name: "execute_child_tool",
        arguments: { server_id: "goose", tool_name: tool, arguments: { process_id: id } },
      }) as Promise<CallToolResult>;
    const bobs = await started(bob, "bob's");
    expect((await goose(bob, "release_gosling", bobs)).isError).toBeFalsy();
    const anns: string[] = [];
    for (const prompt of ["one", "two", "three"]) {
      const id = await started(ann, prompt);
      expect((await goose(ann, "release_gosling", id)).isError).toBeFalsy();
      anns.push(id);
    }
    expect((await goose(bob, "get_gosling_output", bobs)).isError).toBeFalsy();
    expect((await goose(ann, "get_gosling_output", anns[2]!)).isError).toBeFalsy();
    for (const id of anns.slice(0, 2)) expect(failureOf(await goose(ann, "get_gosling_output", id)).code).toBe("NOT_FOUND");
  });
});
