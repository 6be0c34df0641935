// A stdio child is first asked server/discover, as the specification says a client of both eras asks. A 2025
// server that takes no request before initialize (it exits, or leaves the request unanswered) costs gaggle that
// probe once: the start still succeeds, the catalog remembers, and every later start initializes first.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { McpChild } from "../../src/children/mcp-child.js";
import { Switchboard } from "../../src/children/switchboard.js";
import { textOf } from "../helpers/gaggle.js";
import { childConfigOf } from "../helpers/config.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { fixture, STATE_DIR } from "../helpers/paths.js";

/** How long these children have to answer server/discover: shorter than gaggle's own, so a silent one is waited out sooner. */
const PROBE_MS = 1000;

const made: McpChild[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((child) => child.close()));
});

/** A McpChild over the raw fixture; children made with the same name and arguments share one catalog entry. */
function strictChild(name: string, args: string[], env: Record<string, string> = {}): McpChild {
  const entry = [
    `[mcp_servers.${name}]`,
    `command = ${JSON.stringify(process.execPath)}`,
    `args = ${JSON.stringify([fixture("raw-server.mjs"), ...args])}`,
    // A working directory of its own, the same each time: the catalog's entry belongs to the definition.
    `cwd = ${JSON.stringify(STATE_DIR)}`,
    `env = ${JSON.stringify(env).replace(/":/g, '" =')}`,
  ].join("\n");
  const config = childConfigOf(entry);
  const child = new McpChild(config, {
    shutdownGraceMs: 2000,
    probeTimeoutMs: PROBE_MS,
    stateDir: STATE_DIR,
    switchboard: new Switchboard(),
    clock: new ManualClock(),
  });
  made.push(child);
  return child;
}

/** The requests the child was sent before initialize, as it logged them. */
const beforeInitialize = (child: McpChild) => child.status().stderrTail.filter((line) => line.startsWith("before initialize: "));

describe.each([
  ["exits at", "exit"],
  ["stays silent on", "silent"],
])("a 2025 stdio child that %s a request before initialize", (_, strictness) => {
  it("starts on the first try, and is initialized first from then on", { timeout: 20_000 }, async () => {
    const name = `strict_${strictness}`;
    const first = strictChild(name, [`--before-initialize=${strictness}`]);
    expect(textOf((await first.callTool("identified", { n: 1 }, {})) as CallToolResult)).toBe("n = 1");
    expect(beforeInitialize(first)).toEqual(["before initialize: server/discover"]);
    expect(first.status()).toMatchObject({ state: "running", protocol: "2025-11-25", restarts: 0, lastError: null });
    await first.close();

    const later = strictChild(name, [`--before-initialize=${strictness}`]);
    expect(textOf((await later.callTool("identified", { n: 2 }, {})) as CallToolResult)).toBe("n = 2");
    expect(beforeInitialize(later)).toEqual([]);
    expect(later.status().protocol).toBe("2025-11-25");
  });
});

it("a 2025 stdio child that answers the probe with an error is probed on every start: the answer costs nothing", async () => {
  const first = strictChild("lenient", []);
  await first.callTool("identified", { n: 1 }, {});
  await first.close();
  const later = strictChild("lenient", []);
  await later.callTool("identified", { n: 2 }, {});
  expect(later.status().protocol).toBe("2025-11-25");
  expect(beforeInitialize(later)).toEqual(["before initialize: server/discover"]);
});

it("a 2025 stdio child slow to start is probed again next time: its late answer shows it was slow, not deaf", { timeout: 20_000 }, async () => {
  // It reads nothing for longer than gaggle waits on server/discover, then answers the probe (late) and initialize.
  const first = strictChild("slow_starter", [], { RAW_START_DELAY_MS: String(PROBE_MS * 2) });
  expect(textOf((await first.callTool("identified", { n: 1 }, {})) as CallToolResult)).toBe("n = 1");
  expect(first.status().protocol).toBe("2025-11-25");
  await first.close();
  // The same definition (env values are not part of it), now quick.
  const later = strictChild("slow_starter", [], { RAW_START_DELAY_MS: "0" });
  await later.callTool("identified", { n: 2 }, {});
  expect(beforeInitialize(later)).toEqual(["before initialize: server/discover"]);
});
