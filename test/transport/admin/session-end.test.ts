// A resources/read or prompts/get in flight when its client's HTTP session ends: the child is told why, and the request is
// recorded as cancelled, never as the child's failure.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { fixtureChild, NO_BUILT_INS } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";
import { httpTransportOf } from "../../helpers/raw-http.js";
import { json, type Status } from "./helpers.js";

describe("a request the SDK's Server answers, in flight when its client's session ends", () => {
  let gaggle: HttpGaggle;
  let watcher: Client;
  const status = () => json<Status>(`${gaggle.url.replace(/\/mcp$/, "/")}api/status`);
  const protoStderr = async () =>
    (JSON.parse(textOf((await watcher.callTool({ name: "get_child_status", arguments: { server_id: "proto" } })) as never)) as { stderr: string[] })
      .stderr;
  const count = (lines: string[], line: string) => lines.filter((each) => each === line).length;

  beforeAll(async () => {
    // The child's prompts are offered to clients as `proto__<name>`.
    gaggle = await startHttpGaggle(`[gateway]\nexpose = "both"\n\n${NO_BUILT_INS}\n${fixtureChild("proto", "protocol.mjs")}`);
    watcher = await gaggle.connect({ name: "watcher" });
  });
  afterAll(() => gaggle?.stop());

  /** Sends `send` from a new session, ends the session once the child has the request, and returns the request's record. */
  async function endSessionDuring(name: string, method: string, send: (client: Client) => Promise<unknown>, label: string) {
    const arrived = `request ${method}`;
    const before = count(await protoStderr(), arrived);
    const leaving = await gaggle.connect({ name });
    // The session's end answers nothing: the request is left to the client's transport.
    void send(leaving).catch(() => undefined);
    await until(protoStderr, (lines) => count(lines, arrived) > before);
    await httpTransportOf(leaving).terminateSession();
    const now = await until(status, (seen) => seen.recent_calls.some((recent) => recent.client === `${name}/0.0.0`));
    // The child is told, with the plain reason a tools/call's child gets, and stops.
    const lines = await until(protoStderr, (seen) => seen.includes(`cancelled ${label}`));
    const told = lines.slice(lines.lastIndexOf(arrived));
    expect(told).toEqual(expect.arrayContaining(["notification notifications/cancelled", "cancel reason: the client's session ended"]));
    return now.recent_calls.find((recent) => recent.client === `${name}/0.0.0`);
  }

  it("tells the child of a resources/read that the client's session ended, and records it as cancelled", async () => {
    const record = await endSessionDuring(
      "leaving-read",
      "resources/read",
      (client) => client.readResource({ uri: "fixture://slow/30000" }),
      "slow_read",
    );
    expect(record).toMatchObject({ method: "resources/read", child: "proto", outcome: "cancelled", error: null });
  });

  it("tells the child of a prompts/get that the client's session ended, and records it as cancelled", async () => {
    const record = await endSessionDuring(
      "leaving-prompt",
      "prompts/get",
      (client) => client.getPrompt({ name: "proto__slow_prompt", arguments: { ms: "30000" } }),
      "slow_prompt",
    );
    expect(record).toMatchObject({ method: "prompts/get", child: "proto", outcome: "cancelled", error: null });
  });

  it("counts neither as the child's error: no errors, no last error, no restart, nothing logged at warn or above", async () => {
    const proto = (await status()).children.find((child) => child.server_id === "proto") as unknown as Record<string, unknown>;
    expect(proto).toMatchObject({ errors: 0, last_error: null, restarts: 0 });
    const loud = gaggle
      .stderr()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((line) => line.level >= 40);
    expect(loud).toEqual([]);
  });
});
