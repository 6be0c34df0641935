// One McpChild built straight from a fixture entry, on a ManualClock, for tests of a real child without a gaggle around it.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import type { CallContext } from "../../src/children/child.js";
import { McpChild } from "../../src/children/mcp-child.js";
import { Switchboard } from "../../src/children/switchboard.js";
import { GaggleError } from "../../src/shared/errors.js";
import { ManualClock } from "./manual-clock.js";
import { childConfigOf } from "./config.js";
import { fixtureChild, STATE_DIR } from "./paths.js";

const made: McpChild[] = [];

/** A child named "subject" that runs `script`, on a clock that moves only when the test advances it. */
export function mcpChildOf(script: string, extraToml = ""): { child: McpChild; clock: ManualClock; switchboard: Switchboard } {
  const config = childConfigOf(fixtureChild("subject", script, extraToml));
  const clock = new ManualClock();
  const switchboard = new Switchboard();
  const child = new McpChild(config, { shutdownGraceMs: 2000, stateDir: STATE_DIR, switchboard, clock });
  made.push(child);
  return { child, clock, switchboard };
}

/** Closes every child made so far, so no test leaves a process behind; for afterEach. */
export async function closeMadeChildren(): Promise<void> {
  await Promise.all(made.splice(0).map((child) => child.close()));
}

export function callOf(child: McpChild, tool: string, args: Record<string, unknown> = {}, ctx: CallContext = {}): Promise<CallToolResult> {
  return child.callTool(tool, args, ctx);
}

/** The GaggleError a call that must fail rejected with; a call that succeeds, or fails with anything else, fails the test. */
export function refusal(call: Promise<unknown>): Promise<GaggleError> {
  return call.then(
    () => expect.unreachable("the call succeeded"),
    (error: unknown) => {
      if (error instanceof GaggleError) return error;
      throw new Error(`expected a GaggleError, got ${String(error)}`, { cause: error });
    },
  );
}

/** Lets every reaction to what has already happened run: the lock's hops, the first step of a start or stop. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
