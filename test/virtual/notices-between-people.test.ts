// Over HTTP with a token per person, what one person starts is not announced to another: neither by a change of the
// resource list every client reads, nor by updates of resources the other subscribed to before the config stopped
// letting them read it.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResourceListChangedNotificationSchema, ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle, bearer } from "../helpers/gaggle-http.js";
import { textOf } from "../helpers/gaggle.js";
import { listen } from "../helpers/notifications.js";
import { fixtureChild } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";
import { fakeAgentTable, settled, startSession } from "./agents/helpers.js";
import { idOf } from "./goose/helpers.js";
import { teamConfig } from "./team/helpers.js";

const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

/** Goose (the fake), the fake ACP agent, teams, and an echo child whose tools are listed, for a barrier of tool list changes. */
function config(dir: string, gateway: string): string {
  const root = join(dir, "agent-root");
  mkdirSync(root, { recursive: true });
  const tokens = 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }';
  return [
    teamConfig(dir, "", "", `${tokens}\n${gateway}`),
    fakeAgentTable("fake", root, { FAKE_ACP_PIDS: join(dir, "pids.log"), FAKE_ACP_STATE: join(dir, "fake-state") }),
    "",
    fixtureChild("echo", "echo.mjs", 'expose = "tools"'),
  ].join("\n");
}

async function call(client: Client, server: string, tool: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({
    name: "execute_child_tool",
    arguments: { server_id: server, tool_name: tool, arguments: args },
  })) as CallToolResult;
  if (result.isError) throw new Error(`${server}/${tool} failed: ${textOf(result)}`);
  return textOf(result);
}

let gaggle: HttpGaggle | undefined;
afterEach(async () => {
  await gaggle?.stop();
  gaggle = undefined;
});

async function start(gateway = ""): Promise<{ dir: string; ann: Client; bob: Client }> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-notices-"));
  gaggle = await startHttpGaggle(config(dir, gateway), { env: { ...TOKENS, XDG_STATE_HOME: join(dir, "xdg-state") } });
  const ann = await gaggle.connect({ name: "ann", ...bearer(TOKENS.GAGGLE_TEST_ANN) });
  const bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
  return { dir, ann, bob };
}

describe("notices between two people over HTTP", () => {
  it("by default, tells no one that the resource list changed when someone starts a gosling, an agent session or a team", async () => {
    const { ann, bob } = await start();
    const heard = { resources: 0, tools: 0 };
    bob.setNotificationHandler(ResourceListChangedNotificationSchema, () => void heard.resources++);
    bob.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.tools++);
    let added = 0;
    /**
     * A tool list change Bob hears after everything before it: list changes wait out one burst together and each
     * burst sends the resource notice before the tool notice, on the same stream.
     */
    const barrier = async () => {
      const before = heard.tools;
      await call(ann, "echo", "add_tool", { name: `added_${++added}` });
      await until(
        () => heard.tools,
        (count) => count > before,
      );
    };
    // The echo child's start announces its lists; two barriers put all of that behind us.
    await barrier();
    await barrier();
    const before = heard.resources;

    idOf(await call(ann, "goose", "run_goose", { prompt: "[answer hi]" }));
    expect(await call(ann, "agents", "start_agent", { prompt: "whoami" })).toMatch(/Started agent session/);
    expect(JSON.parse(await call(ann, "team", "gg_team_manage", { team_id: "t1", prompt: "[answer hi]" }))).toMatchObject({ team_created: true });
    await barrier();
    expect(heard.resources).toBe(before);
  });

  it('stops telling a subscriber of updates to work the config no longer lets them read (visibility = "all" removed)', async () => {
    const { dir, ann, bob } = await start('visibility = "all"');
    const gosling = idOf(await call(ann, "goose", "run_goose", { prompt: "[answer hi]" }));
    const session = await startSession(ann, { prompt: "whoami" });
    await settled(ann, session, 1);
    const uris = [`goslings://${gosling}/output`, `goslings://${gosling}`, `agents://sessions/${session}/transcript`];
    for (const uri of uris) {
      await ann.subscribeResource({ uri });
      await bob.subscribeResource({ uri });
    }
    const [annHeard, bobHeard] = [listen(ann), listen(bob)];
    /** Bob hears his own gosling's turn end after whatever reached his stream before it. */
    let his: string | undefined;
    const barrier = async () => {
      if (his === undefined) his = idOf(await call(bob, "goose", "run_goose", { prompt: "[answer his]" }));
      else await call(bob, "goose", "send_prompt_to_gosling", { process_id: his, prompt: "[answer again]" });
      await until(
        () => bobHeard.updated.includes(`goslings://${his}/output`),
        (heard) => heard,
      );
    };
    await barrier();
    bobHeard.updated.length = 0;

    writeFileSync(gaggle!.config, config(dir, ""));
    await until(
      () =>
        bob.readResource({ uri: uris[0]! }).then(
          () => "readable",
          () => "not readable",
        ),
      (state) => state === "not readable",
    );
    // From here on the narrowed config is in force: a change announced before it (the transcript's last, sent a
    // moment after its turn ended) was Bob's to hear.
    annHeard.updated.length = 0;
    bobHeard.updated.length = 0;
    await call(ann, "goose", "send_prompt_to_gosling", { process_id: gosling, prompt: "[answer again]" });
    await call(ann, "agents", "prompt_agent", { session_id: session, prompt: "whoami" });
    // Ann hears each; the hub tells every subscriber of a change at once, so whatever Bob would hear is on his stream.
    await until(
      () => uris.every((uri) => annHeard.updated.includes(uri)),
      (all) => all,
    );
    await barrier();
    expect(bobHeard.updated).toEqual([`goslings://${his}/output`]);
  });
});
