// dispatch_agent: one prompt in a new session, run to its end while the call waits, with progress notifications
// as the transcript grows, the agent's answer returned, and the session released after.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { failureOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { waitGone } from "../../helpers/processes.js";
import { agentDirs, agentPids, agentsText, startAgentsGaggle } from "./helpers.js";

let gaggle: RunningGaggle | undefined;
afterEach(async () => {
  await gaggle?.close();
  gaggle = undefined;
});

async function dispatch(client: Client, args: Record<string, unknown>, onprogress?: (progress: Progress) => void): Promise<CallToolResult> {
  return (await client.callTool(
    { name: "execute_child_tool", arguments: { server_id: "agents", tool_name: "dispatch_agent", arguments: args } },
    undefined,
    onprogress ? { onprogress } : {},
  )) as CallToolResult;
}

describe("dispatch_agent", () => {
  it("returns the agent's answer, sends progress while the turn runs, and releases the session", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const progress: Progress[] = [];
    const result = await dispatch(gaggle.client, { prompt: "say working on it\nsleep 700\nplan check | answer\nsay the answer is 42" }, (p) =>
      progress.push(p),
    );
    expect(result.isError).toBeFalsy();
    expect(result.content[0]).toEqual({ type: "text", text: "working on it\nthe answer is 42" });
    expect(result.content[1]).toMatchObject({
      type: "text",
      text: expect.stringMatching(/^\(agent session [0-9a-f-]{36}, fake, \d+\.\ds; get_agent_output/),
    });
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.some((p) => p.message?.includes("[agent] working on it"))).toBe(true);
    const counts = progress.map((p) => p.progress);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(await agentsText(gaggle.client, "list_agent_sessions", { status: "released" })).toMatch(/released: released \(dispatch_agent finished\)/);
    expect(await waitGone(agentPids(dirs))).toEqual([]);
  });

  it("asks the person through the call in flight", async () => {
    const dirs = agentDirs();
    const client = new Client({ name: "person", version: "0.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { decision: "yes" } }));
    gaggle = await startAgentsGaggle(dirs, "", "", client);
    const file = join(dirs.root, "dispatched.txt");
    const done = await dispatch(gaggle.client, { prompt: `write ${file} from a dispatch` });
    expect(done.content[0]).toEqual({ type: "text", text: `wrote ${file}` });
    expect(readFileSync(file, "utf8")).toBe("from a dispatch");
  });

  it("fails when the turn does not complete, naming how it ended", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs, "prompt_timeout_minutes = 0.01");
    const failure = failureOf(await dispatch(gaggle.client, { prompt: "hang", agent: "fake" }));
    expect(failure).toMatchObject({
      code: "SERVER_FAILED",
      error: expect.stringMatching(/^the dispatched agent's turn cancelled after \d+\.\ds: it ran past prompt_timeout_minutes \(0\.6s\)$/),
      hint: expect.stringMatching(/^get_agent_output with session_id="[0-9a-f-]{36}" shows its transcript/),
    });
  });

  it("fails when the agent's process ends mid-turn, saying how it ended and what it wrote on stderr", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const failure = failureOf(await dispatch(gaggle.client, { prompt: "say started\ncrash Error: out of credits" }));
    expect(failure).toMatchObject({
      code: "SERVER_FAILED",
      error: expect.stringMatching(
        /^the dispatched agent's turn failed after \d+\.\ds: agent "fake"'s process ended during the turn \(exit code 3; stderr: Error: out of credits\)$/,
      ),
    });
  });
});
