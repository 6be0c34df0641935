// A real agent through the agents child: Claude, as its ACP adapter (@agentclientprotocol/claude-agent-acp, which
// runs Claude Code through the Claude Agent SDK) is installed from the npm registry, pointed at a stand-in for the
// model API. Claude Code writes files and runs commands with its own tools, so gaggle holds it to the session's
// roots through the permission requests it answers.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type ElicitRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningGaggle } from "../../helpers/gaggle.js";
import { StandInModel, type ModelRequest, type ModelTurn } from "../../helpers/model-api.js";
import { PinnedPackage } from "../../helpers/npm-install.js";
import { descendants, waitGone } from "../../helpers/processes.js";
import { agentDirs, agentsText, settled, startAgentsGaggle, startSession, transcript, type AgentDirs } from "./helpers.js";

/** The adapter's release the test is pinned to; it pins the Claude Agent SDK, whose native Claude Code is a package of its own. */
const ADAPTER = new PinnedPackage("claude-agent-acp", "@agentclientprotocol/claude-agent-acp", "0.101.0", "claude-agent-acp");

beforeAll(() => ADAPTER.install(), 180_000);

/**
 * What the model does with the next prompt: this move first, then a final text naming the results it was given.
 * Claude Code asks the model other things meanwhile (a suggestion of the person's next prompt, after a turn): those
 * get the final text, the move going to the request that carries the prompt itself.
 */
let next: { prompt: string; move: ModelTurn } | undefined;
function script({ results, prompt }: ModelRequest): ModelTurn {
  if (next && prompt.endsWith(next.prompt)) {
    const { move } = next;
    next = undefined;
    return move;
  }
  return { text: `done: ${results.map((result) => `${result.tool} said ${result.text}`).join("; ")}` };
}

/** The options of a permission question, as gaggle offers them: the agent's option ids. */
function choices(request: ElicitRequest): string[] {
  const schema = "requestedSchema" in request.params ? request.params.requestedSchema : undefined;
  const decision = schema?.properties.decision as { oneOf?: Array<{ const: string }> } | undefined;
  return decision?.oneOf?.map((choice) => choice.const) ?? [];
}

let model: StandInModel;
let dirs: AgentDirs;
let gaggle: RunningGaggle;
/** What the person at the MCP client was asked; each question is answered with the agent's first option. */
const asked: ElicitRequest[] = [];

beforeAll(async () => {
  model = await StandInModel.start(script);
  dirs = agentDirs();
  // The person's home, with Claude's own settings: ask before edits (its default would let its classifier decide).
  const home = join(dirs.dir, "home");
  mkdirSync(join(home, ".claude"), { recursive: true });
  writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify({ permissions: { defaultMode: "default" } }));
  const env = {
    HOME: home,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "sk-ant-stand-in",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    // Claude Code refuses to start as root outside a sandbox; containers that run tests are one.
    IS_SANDBOX: "1",
  };
  const client = new Client({ name: "person", version: "0.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request);
    return { action: "accept", content: { decision: choices(request)[0] } };
  });
  const table = [
    `command = ${JSON.stringify(ADAPTER.bin)}`,
    `env = { ${Object.entries(env)
      .map(([key, value]) => `${key} = ${JSON.stringify(value)}`)
      .join(", ")} }`,
  ];
  gaggle = await startAgentsGaggle(dirs, "", `[agents.claude]\n${table.join("\n")}\ncwd = ${JSON.stringify(dirs.root)}\n`, client);
}, 30_000);

afterAll(async () => {
  await gaggle?.close();
  await model?.close();
});

/** Sends a prompt, the model making `move` first, and waits until its turn completed; returns the transcript. */
async function turn(id: string, number: number, move: ModelTurn): Promise<string> {
  next = { prompt: `prompt ${number}`, move };
  await agentsText(gaggle.client, "prompt_agent", { session_id: id, prompt: next.prompt });
  return completed(id, number);
}

async function completed(id: string, number: number): Promise<string> {
  expect(await settled(gaggle.client, id, number, 30_000)).toMatch(new RegExp(`^  ${number}\\. .* \\(completed in `, "m"));
  return transcript(gaggle.client, id);
}

describe("Claude through the agents child", () => {
  it("answers a turn, writes inside the session's roots when the person allows it, is refused outside them, and leaves no process", async () => {
    next = { prompt: "prompt 1", move: { text: "the stand-in model's answer" } };
    const id = await startSession(gaggle.client, { agent: "claude", prompt: next.prompt });
    const first = await completed(id, 1);
    expect(first).toContain("[agent] the stand-in model's answer");
    const status = await agentsText(gaggle.client, "get_agent_status", { session_id: id });
    const pid = Number(/^Agent: claude \(process (\d+)\)$/m.exec(status)?.[1]);
    const processes = [pid, ...descendants(pid)];
    expect(processes.length).toBeGreaterThan(1);

    const inside = join(dirs.root, "notes.txt");
    const second = await turn(id, 2, { use: "Write", input: { file_path: inside, content: "written by Claude" } });
    expect(asked).toHaveLength(1);
    expect((asked[0]!.params as { message: string }).message).toMatch(/^Agent "claude" \(session [0-9a-f-]{36}\) asks permission: Write notes\.txt$/);
    expect(choices(asked[0]!)).toEqual(["allow-once", "allow-with-updates", "reject"]);
    expect(second).toContain("[permission] the person chose Yes (allow_once)");
    expect(readFileSync(inside, "utf8")).toBe("written by Claude");
    expect(second).toContain("[agent] done: Write said File created successfully");

    const outside = join(dirs.outside, "escaped.txt");
    const third = await turn(id, 3, { use: "Write", input: { file_path: outside, content: "escaped" } });
    expect(asked).toHaveLength(1);
    expect(third).toContain(`[permission] it reaches ${outside}, outside the session's roots (${dirs.root}): rejected`);
    expect(existsSync(outside)).toBe(false);
    expect(third).toContain("Write said User refused permission to run tool");

    expect(await agentsText(gaggle.client, "release_agent", { session_id: id })).toContain("Released agent session");
    expect(await waitGone(processes)).toEqual([]);
  }, 120_000);
});
