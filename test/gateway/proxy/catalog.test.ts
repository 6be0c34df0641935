// The persisted catalog in proxy mode: the lists a child gave on its last run answer the first tools/list at once,
// without starting it; a changed definition is a child the catalog does not know; a child known to nobody is
// waited for at most gateway.list_wait_ms, and list_changed tells the client when it comes; a call to a
// catalogued tool starts its child.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { startGaggle, textOf } from "../../helpers/gaggle.js";
import { fixtureChild, NO_BUILT_INS, ROOT } from "../../helpers/paths.js";

const PROXY = '[gateway]\nexpose = "both"\n';
/** Proxy mode whose first list waits for a child the catalog does not know, however busy the machine. */
const WAITING = '[gateway]\nexpose = "both"\nlist_wait_ms = 30000\n';
/**
 * Each run writes its config to a new folder, which a child's cwd defaults to; the cwd is part of what defines a
 * child, so these children name theirs.
 */
const SAME_CWD = `cwd = ${JSON.stringify(ROOT)}`;

/** A gateway with its own state dir (where the catalog is kept), so that each test starts from what it wrote. */
function gatewayIn(state: string, config: string) {
  return startGaggle(config, { env: { XDG_STATE_HOME: state } });
}

const newState = () => mkdtempSync(join(tmpdir(), "catalog-state-"));
const toolNames = async (gaggle: Awaited<ReturnType<typeof startGaggle>>) => (await gaggle.client.listTools()).tools.map((tool) => tool.name).sort();
const stateOf = async (gaggle: Awaited<ReturnType<typeof startGaggle>>, server_id: string) =>
  (await gaggle.metaJson<{ status: string }>("get_child_status", { server_id })).status;

describe("the catalog", () => {
  it("answers the next run's tools/list without starting the child, and a call to a catalogued tool starts it", async () => {
    const state = newState();
    const config = [WAITING, NO_BUILT_INS, fixtureChild("echo", "echo.mjs", SAME_CWD)].join("\n");
    const first = await gatewayIn(state, config);
    const listed = await toolNames(first);
    expect(listed).toContain("echo__echo");
    await first.close();

    const second = await gatewayIn(state, config);
    try {
      expect(await toolNames(second)).toEqual(listed);
      expect(await stateOf(second, "echo")).toBe("not_started");
      expect(textOf((await second.client.callTool({ name: "echo__echo", arguments: { text: "from the catalog" } })) as CallToolResult)).toBe(
        "from the catalog",
      );
      expect(await stateOf(second, "echo")).toBe("running");
    } finally {
      await second.close();
    }
  });

  it("does not answer for a child whose definition changed: that child is started and listed afresh", async () => {
    const state = newState();
    const first = await gatewayIn(state, [WAITING, NO_BUILT_INS, fixtureChild("echo", "echo.mjs", SAME_CWD)].join("\n"));
    await toolNames(first);
    await first.close();

    const changed = await gatewayIn(
      state,
      [WAITING, NO_BUILT_INS, fixtureChild("echo", "echo.mjs", `${SAME_CWD}\nenv = { GREETING = "changed" }`)].join("\n"),
    );
    try {
      expect(await toolNames(changed)).toContain("echo__echo");
      expect(await stateOf(changed, "echo")).toBe("running");
    } finally {
      await changed.close();
    }
  });

  it("keeps an entry for each of two configs sharing a state dir that define a child of the same name", async () => {
    const state = newState();
    const one = [WAITING, NO_BUILT_INS, fixtureChild("echo", "echo.mjs", `${SAME_CWD}\nenv = { GREETING = "one" }`)].join("\n");
    const two = [WAITING, NO_BUILT_INS, fixtureChild("echo", "echo.mjs", SAME_CWD)].join("\n");
    for (const config of [one, two]) {
      const first = await gatewayIn(state, config);
      await toolNames(first);
      await first.close();
    }
    // Each config, run again after the other, lists its child from its own entry without starting it.
    for (const config of [one, two]) {
      const again = await gatewayIn(state, config);
      try {
        expect(await toolNames(again)).toContain("echo__echo");
        expect(await stateOf(again, "echo")).toBe("not_started");
      } finally {
        await again.close();
      }
    }
  });

  it("an out-of-date entry is listed first, then corrected with list_changed once the child runs", async () => {
    const state = newState();
    const config = [WAITING, NO_BUILT_INS, fixtureChild("echo", "echo.mjs", SAME_CWD)].join("\n");
    const first = await gatewayIn(state, config);
    await toolNames(first);
    await first.close();
    // As if the child had one tool more on its last run.
    const [entryFile = "", ...others] = readdirSync(join(state, "gaggle", "catalog")).filter((name) => name.startsWith("echo."));
    expect(others).toEqual([]);
    const file = join(state, "gaggle", "catalog", entryFile);
    const entry = JSON.parse(readFileSync(file, "utf8")) as { lists: { tools: Array<{ name: string }> } };
    entry.lists.tools.push({ ...entry.lists.tools[0]!, name: "retired" });
    writeFileSync(file, JSON.stringify(entry));

    const second = await gatewayIn(state, config);
    try {
      let changes = 0;
      second.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
      expect(await toolNames(second)).toContain("echo__retired");
      await second.client.callTool({ name: "echo__echo", arguments: { text: "start it" } });
      await expect.poll(() => changes, { timeout: 10_000 }).toBeGreaterThan(0);
      expect(await toolNames(second)).not.toContain("echo__retired");
    } finally {
      await second.close();
    }
  });
});

describe("a first tools/list over children the catalog does not know", () => {
  it("waits for them at most list_wait_ms, lists what it has, and sends list_changed when the rest come", async () => {
    // The slow child serves only once this file exists: after the first list has been answered without it.
    const gate = join(newState(), "gate");
    const config = [
      `[gateway]\nexpose = "both"\nlist_wait_ms = 2500\n`,
      NO_BUILT_INS,
      fixtureChild("quick", "echo.mjs"),
      fixtureChild("slow", "slow.mjs", `env = { SLOW_START_UNTIL = ${JSON.stringify(gate)} }`),
    ].join("\n");
    const gaggle = await gatewayIn(newState(), config);
    try {
      let changes = 0;
      gaggle.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
      const first = await toolNames(gaggle);
      expect(first).toContain("quick__echo");
      expect(first.filter((name) => name.startsWith("slow__"))).toEqual([]);
      writeFileSync(gate, "");
      await expect.poll(() => changes, { timeout: 15_000 }).toBeGreaterThan(0);
      expect((await toolNames(gaggle)).some((name) => name.startsWith("slow__"))).toBe(true);
    } finally {
      await gaggle.close();
    }
  });

  it("answers every first list in turn within the two seconds claude -p gives them all, over ten children that each take 8 s to start", async () => {
    const slow = Array.from({ length: 10 }, (_, i) => fixtureChild(`slow${i}`, "slow.mjs", 'env = { SLOW_START_MS = "8000" }'));
    const gaggle = await gatewayIn(newState(), [PROXY, NO_BUILT_INS, ...slow].join("\n"));
    try {
      // One deadline for the four lists together, asked one after another as the client asks them.
      const deadline = Date.now() + 2000;
      const left = () => ({ timeout: Math.max(1, deadline - Date.now()) });
      const { tools } = await gaggle.client.listTools(undefined, left());
      expect(tools.map((tool) => tool.name)).toContain("execute_child_tool");
      expect((await gaggle.client.listPrompts(undefined, left())).prompts).toEqual([]);
      expect((await gaggle.client.listResources(undefined, left())).resources).toEqual(expect.any(Array));
      expect((await gaggle.client.listResourceTemplates(undefined, left())).resourceTemplates).toEqual(expect.any(Array));
    } finally {
      await gaggle.close();
    }
  });
});

describe("a first tools/list for a client that lists only once", () => {
  it("waits for the children the catalog does not know, up to that client's own bound, where others get what is ready", async () => {
    const config = [
      `[gateway]\nexpose = "both"\nlist_wait_ms = 300\nlist_wait_ms_by_client = { lists-once = 30000 }\n`,
      NO_BUILT_INS,
      fixtureChild("slow", "slow.mjs", 'env = { SLOW_START_MS = "2500" }'),
    ].join("\n");
    const other = await startGaggle(config, { env: { XDG_STATE_HOME: newState() } });
    const once = await startGaggle(config, { env: { XDG_STATE_HOME: newState() }, client: new Client({ name: "lists-once", version: "1" }) });
    try {
      const [forOther, forOnce] = await Promise.all([toolNames(other), toolNames(once)]);
      expect(forOther.filter((name) => name.startsWith("slow__"))).toEqual([]);
      expect(forOnce.filter((name) => name.startsWith("slow__")).length).toBeGreaterThan(0);
    } finally {
      await Promise.all([other.close(), once.close()]);
    }
  });
});
