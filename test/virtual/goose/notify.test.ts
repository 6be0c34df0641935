// When a turn ends, the client that sent its prompt is told: a log message and resources/updated for its output.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { readJsonResource, textOf } from "../../helpers/gaggle.js";
import { listen } from "../../helpers/notifications.js";
import { until } from "../../helpers/poll.js";
import { INITIALIZE, postMcp } from "../../helpers/raw-http.js";
import { gooseConfig, idOf, startGooseGaggle, type GooseGaggle } from "./helpers.js";

async function runGoose(client: Client, prompt: string): Promise<string> {
  const result = (await client.callTool({
    name: "execute_child_tool",
    arguments: { server_id: "goose", tool_name: "run_goose", arguments: { prompt } },
  })) as CallToolResult;
  return idOf(textOf(result));
}

let goose: GooseGaggle | undefined;
let http: HttpGaggle | undefined;
afterEach(async () => {
  await goose?.gaggle.close();
  await http?.stop();
  goose = http = undefined;
});

describe("the turn-end notice", () => {
  it("reaches the calling client as a log message and resources/updated for goslings://<id>/output, each turn", async () => {
    goose = await startGooseGaggle();
    const heard = listen(goose.gaggle.client);
    const id = await runGoose(goose.gaggle.client, "[answer hi]");
    await until(
      () => heard.logs.length,
      (count) => count >= 1,
    );
    await goose.text("send_prompt_to_gosling", { process_id: id, prompt: "[fail]" });
    await until(
      () => heard.logs.length,
      (count) => count >= 2,
    );
    expect(heard.logs[0]).toMatchObject({
      level: "info",
      logger: "goose",
      data: {
        gosling: id,
        prompt: 1,
        status: "completed",
        tokens: 100,
        queued: 0,
        output: `goslings://${id}/output`,
        message: expect.stringMatching(new RegExp(`^gosling ${id} finished prompt 1 \\(completed\\) after \\d+\\.\\ds`)),
      },
    });
    expect(heard.logs[1]).toMatchObject({
      level: "warning",
      data: { prompt: 2, status: "error", message: expect.stringContaining("Goose reported an error") },
    });
    await until(
      () => heard.updated.length,
      (count) => count >= 2,
    );
    expect(heard.updated.slice(0, 2)).toEqual([`goslings://${id}/output`, `goslings://${id}/output`]);
  });

  it("over HTTP reaches the session that sent the prompt and no other", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
    http = await startHttpGaggle(gooseConfig(dir));
    const sender = await http.connect();
    const other = await http.connect();
    const [toSender, toOther] = [listen(sender), listen(other)];
    const id = await runGoose(sender, "[answer only for the sender]");
    await until(
      () => toSender.updated.length,
      (count) => count >= 1,
    );
    expect(toSender.logs).toEqual([expect.objectContaining({ logger: "goose", data: expect.objectContaining({ gosling: id }) })]);
    expect(toSender.updated).toEqual([`goslings://${id}/output`]);
    // A subscriber hears of the output too; the other session was not subscribed when the turn ended.
    await other.subscribeResource({ uri: `goslings://${id}/output` });
    const follow = await sender.callTool({
      name: "execute_child_tool",
      arguments: { server_id: "goose", tool_name: "send_prompt_to_gosling", arguments: { process_id: id, prompt: "again" } },
    });
    expect((follow as CallToolResult).isError).toBeFalsy();
    await until(
      () => toOther.updated.length,
      (count) => count >= 1,
    );
    expect(toOther.updated).toEqual([`goslings://${id}/output`]);
    expect(toOther.logs).toEqual([]);
  });

  it('over HTTP with a token per person and visibility = "all", only the person who started a gosling may prompt or release it', async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
    const tokens = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BEN: "ben-token-0123456789" };
    const gateway = 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", ben = "${GAGGLE_TEST_BEN}" }\nvisibility = "all"';
    http = await startHttpGaggle(gooseConfig(dir, "", gateway), { env: tokens });
    const ann = await http.connect({ headers: { authorization: `Bearer ${tokens.GAGGLE_TEST_ANN}` } });
    const ben = await http.connect({ headers: { authorization: `Bearer ${tokens.GAGGLE_TEST_BEN}` } });
    const id = await runGoose(ann, "[answer hi]");
    const gooseTool = (client: Client, tool: string, args: Record<string, unknown>) =>
      client.callTool({ name: "execute_child_tool", arguments: { server_id: "goose", tool_name: tool, arguments: args } }) as Promise<CallToolResult>;
    for (const [tool, args] of [
      ["send_prompt_to_gosling", { process_id: id, prompt: "not yours" }],
      ["release_gosling", { process_id: id }],
    ] as const) {
      const refused = await gooseTool(ben, tool, args);
      expect(refused.isError).toBe(true);
      expect(JSON.parse(textOf(refused))).toMatchObject({
        code: "PERMISSION_DENIED",
        error: `gosling ${id} belongs to another client ("ann"), not to you ("ben")`,
      });
    }
    expect(textOf(await gooseTool(ben, "terminate_all_goslings", {}))).toBe("No goslings to terminate.");
    expect(textOf(await gooseTool(ben, "get_gosling_status", { process_id: id }))).toContain(id);
    // Ann, from a new session, still owns it.
    const annAgain = await http.connect({ headers: { authorization: `Bearer ${tokens.GAGGLE_TEST_ANN}` } });
    expect(textOf(await gooseTool(annAgain, "release_gosling", { process_id: id }))).toContain(`Released gosling ${id}`);
  });

  it("over HTTP, stops naming a gosling in the list every client reads once the config's edit gives each person a token", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
    const tokens = { GAGGLE_TEST_ANN: "ann-token-0123456789" };
    http = await startHttpGaggle(gooseConfig(dir), { env: tokens });
    const anyone = await http.connect();
    const id = await runGoose(anyone, "[answer hi]");
    expect((await anyone.listResources()).resources.map((resource) => resource.uri)).toContain(`goslings://${id}/output`);

    writeFileSync(http.config, gooseConfig(dir, "", 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}" }'));
    const gaggle = http;
    await until(
      async () => (await postMcp(gaggle.port, INITIALIZE)).status,
      (status) => status === 401,
    );
    const ann = await http.connect({ headers: { authorization: `Bearer ${tokens.GAGGLE_TEST_ANN}` } });
    expect((await ann.listResources()).resources.map((resource) => resource.uri)).not.toContain(`goslings://${id}/output`);
  });

  it("over HTTP with a token per person, by default, another person neither sees a gosling nor closes it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
    const tokens = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BEN: "ben-token-0123456789" };
    http = await startHttpGaggle(gooseConfig(dir, "", 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", ben = "${GAGGLE_TEST_BEN}" }'), { env: tokens });
    const ann = await http.connect({ headers: { authorization: `Bearer ${tokens.GAGGLE_TEST_ANN}` } });
    const ben = await http.connect({ headers: { authorization: `Bearer ${tokens.GAGGLE_TEST_BEN}` } });
    const id = await runGoose(ann, "[answer ann-private-prompt]");
    const gooseTool = (client: Client, tool: string, args: Record<string, unknown>) =>
      client.callTool({ name: "execute_child_tool", arguments: { server_id: "goose", tool_name: tool, arguments: args } }) as Promise<CallToolResult>;
    for (const [tool, args] of [
      ["get_gosling_output", { process_id: id, full_output: true }],
      ["get_gosling_status", { process_id: id }],
      ["send_prompt_to_gosling", { process_id: id, prompt: "not yours" }],
      ["release_gosling", { process_id: id }],
    ] as const) {
      const refused = await gooseTool(ben, tool, args);
      expect(refused.isError).toBe(true);
      expect(JSON.parse(textOf(refused))).toMatchObject({ code: "NOT_FOUND" });
    }
    for (const tool of ["list_goslings", "get_gosling_status"]) expect(textOf(await gooseTool(ben, tool, {}))).not.toContain(id);
    expect(JSON.stringify(await ben.listResources())).not.toContain("ann-private-prompt");
    expect(await readJsonResource(ben, "goslings://list")).toEqual([]);
    await expect(ben.readResource({ uri: `goslings://${id}/output` })).rejects.toThrow(/not found/i);
    // Ben closing the goose child releases his goslings, not Ann's.
    const bens = await runGoose(ben, "[answer ben]");
    expect((await ben.callTool({ name: "close_child_session", arguments: { server_id: "goose" } })).isError).toBeFalsy();
    expect(textOf(await gooseTool(ben, "get_gosling_status", { process_id: bens }))).toContain("released");
    expect(textOf(await gooseTool(ann, "get_gosling_status", { process_id: id }))).not.toContain("released");
    expect(textOf(await gooseTool(ann, "get_gosling_output", { process_id: id, full_output: true }))).toContain("ann-private-prompt");
  });
});
