import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { fixtureChild } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

let gaggle: RunningGaggle;

beforeAll(async () => {
  gaggle = await startGaggle(
    [
      fixtureChild("inherits", "echo.mjs", 'env = { OWN = "mine", GAGGLE_TEST_SHARED = "overridden" }'),
      fixtureChild("isolated", "echo.mjs", 'inherit_env = false\nenv = { OWN = "${GAGGLE_TEST_PARENT}-expanded" }'),
    ].join("\n"),
    { env: { GAGGLE_TEST_PARENT: "from-parent", GAGGLE_TEST_SHARED: "parent" } },
  );
});
afterAll(async () => {
  await gaggle.close();
});

const envOf = async (server: string, name: string) =>
  textOf(await gaggle.meta("execute_child_tool", { server_id: server, tool_name: "env", arguments: { name } }));

describe("child environment", () => {
  it("inherits gaggle's environment with the child's env merged over it", async () => {
    expect(await envOf("inherits", "GAGGLE_TEST_PARENT")).toBe("from-parent");
    expect(await envOf("inherits", "GAGGLE_TEST_SHARED")).toBe("overridden");
    expect(await envOf("inherits", "OWN")).toBe("mine");
  });

  it("with inherit_env = false passes only its env and a minimal safe set", async () => {
    expect(await envOf("isolated", "GAGGLE_TEST_PARENT")).toBe("<unset>");
    expect(await envOf("isolated", "OWN")).toBe("from-parent-expanded");
    expect(await envOf("isolated", "PATH")).toBe(process.env.PATH);
  });
});

describe("the variables bearer tokens come from", () => {
  const TOKENS = { GAGGLE_TEST_ANN_TOKEN: "ann-token-0123456789", GAGGLE_TEST_BOB_TOKEN: "bob-token-0123456789" };
  let http: HttpGaggle;
  afterAll(() => http?.stop());

  it("reach no child: not a background process, a workspace shell, nor a configured server", async () => {
    const root = mkdtempSync(join(tmpdir(), "gaggle-env-"));
    http = await startHttpGaggle(
      [
        "[gateway]",
        'auth_tokens = { ann = "${GAGGLE_TEST_ANN_TOKEN}", bob = "${GAGGLE_TEST_BOB_TOKEN}" }',
        "[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false",
        `[virtual.workspace]\nenabled = true\nroots = [${JSON.stringify(root)}]`,
        fixtureChild("server", "echo.mjs"),
      ].join("\n"),
      { env: { ...TOKENS, GAGGLE_TEST_PLAIN: "plain-value" } },
    );
    const ann = await http.connect({ headers: { authorization: `Bearer ${TOKENS.GAGGLE_TEST_ANN_TOKEN}` } });
    const call = async (server: string, tool: string, args: Record<string, unknown>) =>
      textOf(
        (await ann.callTool({ name: "execute_child_tool", arguments: { server_id: server, tool_name: tool, arguments: args } })) as CallToolResult,
      );

    for (const name of [...Object.keys(TOKENS), "GAGGLE_TEST_PLAIN"]) {
      expect(await call("server", "env", { name })).toBe(name === "GAGGLE_TEST_PLAIN" ? "plain-value" : "<unset>");
    }
    const shell = await call("workspace", "Bash", { command: "env" });
    expect(shell).toContain("GAGGLE_TEST_PLAIN=plain-value");
    const { pid } = JSON.parse(await call("process", "gg_process_run", { command: "env" })) as { pid: number };
    const ended = await until(
      async () => JSON.parse(await call("process", "gg_process_status", { pid, tail_lines: 500 })) as { status: string; output: string },
      (status) => status.status !== "running",
    );
    expect(ended.output).toContain("GAGGLE_TEST_PLAIN=plain-value");
    for (const seen of [shell, ended.output]) {
      for (const [name, token] of Object.entries(TOKENS)) {
        expect(seen).not.toContain(name);
        expect(seen).not.toContain(token);
      }
    }
  });
});
