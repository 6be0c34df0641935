// A real agent through the agents child: Claude, as its ACP adapter (@agentclientprotocol/claude-agent-acp, which
// runs Claude Code through the Claude Agent SDK) is installed from the npm registry, pointed at a stand-in for the
// model API: turns and their answers, a permission asked of the person, cancel, session/load, dispatch_agent, no
// process left behind (a background command of Claude's included), and Claude as a team member using gaggle's tools.
// Claude Code writes files and runs commands with its own tools, not through gaggle's fs/ and terminal/ methods, so
// gaggle holds it to the session's roots through the permission requests it answers.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { startHttpGaggle } from "../../helpers/gaggle-http.js";
import { teamConfig } from "../team/helpers.js";
import { StandInModel, type ModelRequest, type ModelTurn } from "../../helpers/model-api.js";
import { PinnedPackage } from "../../helpers/npm-install.js";
import { until } from "../../helpers/poll.js";
import { descendants, groupOf, isAlive, waitGone } from "../../helpers/processes.js";
import { agentDirs, agentsText, settled, startAgentsGaggle, startSession, transcript, type AgentDirs } from "./helpers.js";

/** The adapter's release the test is pinned to; it pins the Claude Agent SDK, whose native Claude Code is a package of its own. */
const ADAPTER = new PinnedPackage("claude-agent-acp", "@agentclientprotocol/claude-agent-acp", "0.101.0", "claude-agent-acp");

beforeAll(() => ADAPTER.install(), 180_000);

/**
 * What the model does with the next prompt: this move first, then a final text naming the results it was given.
 * Claude Code asks the model other things meanwhile (a suggestion of the person's next prompt, after a turn): those
 * get the final text, the move going to the request that carries the prompt itself.
 */
let next: { prompt: string; move: ModelTurn | (() => Promise<ModelTurn>) } | undefined;
function script({ results, prompt }: ModelRequest): ModelTurn | Promise<ModelTurn> {
  if (next && prompt.endsWith(next.prompt)) {
    const { move } = next;
    next = undefined;
    return typeof move === "function" ? move() : move;
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

/** A gaggle whose [agents.claude] runs the adapter in `at`'s root against the stand-in model; `client` is connected to it. */
async function claudeGaggle(at: AgentDirs, agent = "", client?: Client): Promise<RunningGaggle> {
  return startAgentsGaggle(at, "", claudeTable(at, agent), client);
}

/** [agents.claude], with the keys of `agent` added. */
function claudeTable(at: AgentDirs, agent = ""): string {
  // The person's home, with Claude's own settings: ask before edits (its default would let its classifier decide).
  const home = join(at.dir, "home");
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
    // MCP servers' tools offered to the model by name, rather than found through a search tool first.
    ENABLE_TOOL_SEARCH: "false",
  };
  const table = [
    "[agents.claude]",
    `command = ${JSON.stringify(ADAPTER.bin)}`,
    `cwd = ${JSON.stringify(at.root)}`,
    `env = { ${Object.entries(env)
      .map(([key, value]) => `${key} = ${JSON.stringify(value)}`)
      .join(", ")} }`,
    agent,
  ];
  return table.join("\n");
}

beforeAll(async () => {
  model = await StandInModel.start(script);
  dirs = agentDirs();
  const client = new Client({ name: "person", version: "0.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request);
    return { action: "accept", content: { decision: choices(request)[0] } };
  });
  gaggle = await claudeGaggle(dirs, "", client);
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

async function completed(id: string, number: number, client = gaggle.client): Promise<string> {
  expect(await settled(client, id, number, 30_000)).toMatch(new RegExp(`^  ${number}\\. .* \\(completed in `, "m"));
  return transcript(client, id);
}

/** The adapter's process of a session, and every process under it. */
async function processesOf(client: Client, id: string): Promise<{ pid: number; tree: number[] }> {
  const status = await agentsText(client, "get_agent_status", { session_id: id });
  const pid = Number(/^Agent: claude \(process (\d+)\)$/m.exec(status)?.[1]);
  return { pid, tree: [pid, ...descendants(pid)] };
}

/** The process groups of the members of `tree` still running (one that ended since the tree was listed is left out). */
function liveGroups(tree: number[]): number[] {
  return tree.flatMap((member) => {
    try {
      return [groupOf(member)];
    } catch {
      return [];
    }
  });
}

/** Starts a session whose first turn has Claude run `sleep 300` in the background, in a process group of its own. */
async function sleepInBackground(client: Client): Promise<{ id: string; tree: number[] }> {
  next = { prompt: "start a server", move: { use: "Bash", input: { command: "sleep 300", run_in_background: true, description: "a server" } } };
  const id = await startSession(client, { agent: "claude", prompt: "start a server" });
  expect(await completed(id, 1, client)).toContain("Bash said Command running in background");
  // Claude's tree may hold short-lived helpers, gone between the listing and the read of their group: only the groups
  // of live members count, and the tree is read again until the background command is seen outside the agent's group.
  const { pid, tree } = await until(
    () => processesOf(client, id),
    (found) => liveGroups(found.tree).some((group) => group !== found.pid),
  );
  expect(liveGroups(tree).filter((group) => group !== pid)).not.toEqual([]);
  return { id, tree };
}

describe("Claude through the agents child", () => {
  it("answers a turn, writes inside the session's roots when the person allows it, is refused outside them, and leaves no process", async () => {
    next = { prompt: "prompt 1", move: { text: "the stand-in model's answer" } };
    const id = await startSession(gaggle.client, { agent: "claude", prompt: next.prompt });
    const first = await completed(id, 1);
    expect(first).toContain("[agent] the stand-in model's answer");
    const { tree: processes } = await processesOf(gaggle.client, id);
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

  it("is refused a read outside the session's roots: the file's text never reaches the model", async () => {
    const secret = join(dirs.outside, "secret.txt");
    writeFileSync(secret, "the secret text");
    next = { prompt: "read it", move: { use: "Read", input: { file_path: secret } } };
    const questions = asked.length;
    const id = await startSession(gaggle.client, { agent: "claude", prompt: "read it" });
    const text = await completed(id, 1);
    expect(text).toContain(`[permission] it reaches ${secret}, outside the session's roots (${dirs.root}): rejected`);
    expect(asked).toHaveLength(questions);
    // Requests after the turn (a suggestion of the next prompt) may carry the result again.
    const reads = model.requests.flatMap((request) => request.results).filter((result) => result.tool === "Read");
    expect(new Set(reads.map((result) => result.text))).toEqual(new Set(["User refused permission to run tool"]));
    await agentsText(gaggle.client, "release_agent", { session_id: id });
  });

  it("cancels a turn while the model is still answering, and the session takes the next prompt", async () => {
    let answering!: () => void;
    const asking = new Promise<void>((resolve) => (answering = resolve));
    const answered = new Promise<ModelTurn>(() => {});
    next = { prompt: "think long", move: () => (answering(), answered) };
    const id = await startSession(gaggle.client, { agent: "claude", prompt: "think long" });
    await asking;
    await agentsText(gaggle.client, "cancel_agent_turn", { session_id: id });
    expect(await settled(gaggle.client, id, 1, 30_000)).toMatch(/^ {2}1\. .* \(cancelled in /m);
    expect(await transcript(gaggle.client, id)).toContain("[prompt 1] cancelled: stop reason: cancelled");
    // The session goes on.
    expect(await turn(id, 2, { text: "after the cancel" })).toContain("[agent] after the cancel");
    await agentsText(gaggle.client, "release_agent", { session_id: id });
  });

  it("resumes a released session with load_session, the agent replaying the conversation", async () => {
    next = { prompt: "remember this", move: { text: "remembered" } };
    const first = await startSession(gaggle.client, { agent: "claude", prompt: "remember this" });
    await completed(first, 1);
    const status = await agentsText(gaggle.client, "get_agent_status", { session_id: first });
    const acpId = /^ACP session: (\S+)$/m.exec(status)![1]!;
    await agentsText(gaggle.client, "release_agent", { session_id: first });
    next = { prompt: "and now", move: { text: "still here" } };
    const resumed = await startSession(gaggle.client, { agent: "claude", load_session: acpId, prompt: "and now" });
    const text = await completed(resumed, 1);
    expect(text).toContain(`[user] remember this\n[agent] remembered\n[gaggle] ACP session ${acpId} loaded\n[agent] still here\n`);
    await agentsText(gaggle.client, "release_agent", { session_id: resumed });
  });

  it("runs one prompt to its end with dispatch_agent and returns the answer", async () => {
    next = { prompt: "a question", move: { text: "an answer" } };
    const result = (await gaggle.client.callTool({
      name: "execute_child_tool",
      arguments: { server_id: "agents", tool_name: "dispatch_agent", arguments: { prompt: "a question", agent: "claude" } },
    })) as CallToolResult;
    expect(result.content[0]).toEqual({ type: "text", text: "an answer" });
  });
});

describe("no process of Claude outlives its session", () => {
  it("a command it left running in the background, in a process group of its own, ends with the session's release", async () => {
    const { id, tree } = await sleepInBackground(gaggle.client);
    const [adapter, ...session] = tree;
    // Another session keeps the adapter running: the released one is closed in it (session/close).
    next = { prompt: "stay", move: { text: "staying" } };
    const other = await startSession(gaggle.client, { agent: "claude", prompt: "stay" });
    await completed(other, 1);
    await agentsText(gaggle.client, "release_agent", { session_id: id });
    expect(await waitGone(session)).toEqual([]);
    expect(isAlive(adapter!)).toBe(true);
    await agentsText(gaggle.client, "release_agent", { session_id: other });
    expect(await waitGone(tree)).toEqual([]);
  });

  it("nor a gaggle killed with SIGKILL while such a command runs", async () => {
    const killed = await claudeGaggle(agentDirs(), 'permission = "allow"');
    const { tree } = await sleepInBackground(killed.client);
    process.kill(killed.pid, "SIGKILL");
    expect(await waitGone(tree)).toEqual([]);
  });
});

describe("Claude as a team member", () => {
  it("answers the lead through gaggle's team tools on its member URL, its permission granted by policy", async () => {
    const at = agentDirs();
    const config = `${teamConfig(at.dir)}\n${claudeTable(at, 'permission = "allow"')}\n`;
    const http = await startHttpGaggle(config, { env: { XDG_STATE_HOME: join(at.dir, "xdg-state") } });
    try {
      const lead = await http.connect({ name: "lead" });
      const team = async (tool: string, args: Record<string, unknown>) => {
        const result = (await lead.callTool({
          name: "execute_child_tool",
          arguments: { server_id: "team", tool_name: tool, arguments: { team_id: "t1", ...args } },
        })) as CallToolResult;
        return JSON.parse(textOf(result)) as Record<string, unknown>;
      };
      // The onboarding prompt ends by saying how to reply; the model does so through gaggle's meta-tool.
      const message = { team_id: "t1", recipient_agent_id: "lead", message: "hello from Claude" };
      next = {
        prompt: 'recipient_agent_id "lead".)',
        move: { use: "mcp__gaggle__execute_child_tool", input: { server_id: "team", tool_name: "gg_team_message", arguments: message } },
      };
      const added = await team("gg_team_manage", { title: "claude", agent: "claude", prompt: "report to the lead" });
      const unread = await until(
        async () => (await team("gg_team_status", {})).unread_messages as Array<Record<string, unknown>>,
        (messages) => messages.length > 0,
        30_000,
      );
      expect(unread).toEqual([expect.objectContaining({ from: added.agent_id, from_title: "claude", message: "hello from Claude" })]);
      const output = await agentsText(lead, "get_agent_output", { session_id: added.agent_session_id, limit: 1000 });
      expect(output).toMatch(/\[permission\] permission = "allow" allows this \w+ tool call: Yes/);
    } finally {
      await http.stop();
    }
  }, 60_000);
});
