import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { fixtureChild } from "../../helpers/paths.js";

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
