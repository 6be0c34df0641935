// An agent session's turns over time: cancelled mid-turn (by the client, or at prompt_timeout_minutes), resumed with
// session/load after its process ends or in a new session, an agent that never answers initialize stopped on release,
// and no agent process left when gaggle is killed.
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { failureOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { waitGone } from "../../helpers/processes.js";
import {
  agentConfig,
  agentDirs,
  agentPids,
  agentsText,
  callAgents,
  FAKE_AGENT,
  settled,
  startAgentsGaggle,
  startSession,
  transcript,
  type AgentDirs,
} from "./helpers.js";

let gaggle: RunningGaggle | undefined;
afterEach(async () => {
  await gaggle?.close();
  gaggle = undefined;
});

describe("cancel", () => {
  it("cancels the running turn with session/cancel; a prompt queued behind it still runs", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const { client } = gaggle;
    const id = await startSession(client, { prompt: "say started\nhang\nsay never said" });
    await until(
      () => transcript(client, id),
      (text) => text.includes("[agent] started"),
    );
    expect(await agentsText(client, "prompt_agent", { session_id: id, prompt: "say after" })).toContain("It is queued behind 1 turn.");
    expect(await agentsText(client, "cancel_agent_turn", { session_id: id })).toBe(
      `Cancelling prompt 1 of agent session ${id}; get_agent_status shows when it has stopped.`,
    );
    const status = await settled(client, id, 2);
    expect(status).toMatch(/^ {2}1\. .* \(cancelled in .*: stop reason: cancelled\)$/m);
    expect(status).toMatch(/^ {2}2\. "say after" \(completed in /m);
    const text = await transcript(client, id);
    expect(text).toContain("[gaggle] cancelling prompt 1: cancel_agent_turn");
    expect(text).not.toContain("[agent] never said");
    expect(text).toContain("[agent] after");
    expect(await agentsText(client, "cancel_agent_turn", { session_id: id })).toBe(`Agent session ${id} runs no turn; nothing to cancel.`);
  });

  it("cancels a turn that runs past prompt_timeout_minutes", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs, "prompt_timeout_minutes = 0.01");
    const id = await startSession(gaggle.client, { prompt: "hang" });
    expect(await settled(gaggle.client, id, 1)).toMatch(/^ {2}1\. "hang" \(cancelled in .*: it ran past prompt_timeout_minutes \(0\.6s\)\)$/m);
    expect(await transcript(gaggle.client, id)).toContain("[gaggle] cancelling prompt 1: it ran past prompt_timeout_minutes (0.6s)");
  });
});

describe("session/load", () => {
  it("resumes a session in a new agent process after its process ended", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const { client } = gaggle;
    const id = await startSession(client, { prompt: "whoami" });
    await settled(client, id, 1);
    const [first] = agentPids(dirs);
    process.kill(first!, "SIGKILL");
    await until(
      () => transcript(client, id),
      (text) => text.includes("[gaggle] the agent's process ended (signal SIGKILL)"),
    );
    await agentsText(client, "prompt_agent", { session_id: id, prompt: "whoami" });
    await settled(client, id, 2);
    const [, second] = agentPids(dirs);
    const text = await transcript(client, id);
    expect(text).toMatch(/\[gaggle\] ACP session fake-\d+-\d+ loaded/);
    // The agent's replay of the conversation is not shown twice.
    expect(text.match(/\[user\]/g)).toBeNull();
    expect(text).toContain(`pid ${second} turn 2 session fake-${first}-`);
  });

  it("fails a turn when the process ended and the agent cannot load sessions", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs, "", "", undefined, { FAKE_ACP_NO_LOAD: "1" });
    const { client } = gaggle;
    const id = await startSession(client, { prompt: "say hi" });
    await settled(client, id, 1);
    process.kill(agentPids(dirs)[0]!, "SIGKILL");
    await until(
      () => transcript(client, id),
      (text) => text.includes("the agent's process ended"),
    );
    await agentsText(client, "prompt_agent", { session_id: id, prompt: "say again" });
    expect(await settled(client, id, 2)).toMatch(/^ {2}2\. "say again" \(failed in .*: agent "fake" cannot load sessions/m);
  });

  it("starts a session on an ACP session an earlier one made (load_session), replaying its conversation", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const { client } = gaggle;
    const id = await startSession(client, { prompt: "say remember the walrus" });
    await settled(client, id, 1);
    const acpId = /ACP session: (\S+)/.exec(await agentsText(client, "get_agent_status", { session_id: id }))![1]!;
    await agentsText(client, "release_agent", { session_id: id });
    const resumed = await startSession(client, { load_session: acpId, prompt: "whoami" });
    await settled(client, resumed, 1);
    const text = await transcript(client, resumed);
    expect(text).toContain("[user] say remember the walrus");
    expect(text).toContain("[agent] remember the walrus");
    expect(text).toContain(`turn 2 session ${acpId}`);
  });

  it("refuses to load an ACP session the agent does not know", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const id = await startSession(gaggle.client, { load_session: "no-such-session", prompt: "say hi" });
    await until(
      () => agentsText(gaggle!.client, "get_agent_status", { session_id: id }),
      (text) => text.includes("Status: failed"),
    );
    expect(failureOf(await callAgents(gaggle.client, "prompt_agent", { session_id: id, prompt: "say hi" }))).toMatchObject({
      code: "INVALID_ARGS",
      error: expect.stringContaining(`session ${id} is failed`),
    });
  });
});

describe("limits", () => {
  it("releases a session idle for idle_release_minutes, and its process ends with it", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs, "idle_release_minutes = 0.01");
    const id = await startSession(gaggle.client, { prompt: "say hi" });
    await until(
      () => agentsText(gaggle!.client, "get_agent_status", { session_id: id }),
      (text) => text.includes("Status: released (idle for 0.6s (idle_release_minutes))"),
    );
    expect(await waitGone(agentPids(dirs))).toEqual([]);
  });

  it("refuses a session past max_active, and takes one again once a session is released", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs, "max_active = 1");
    const id = await startSession(gaggle.client, {});
    expect(failureOf(await callAgents(gaggle.client, "start_agent", {}))).toMatchObject({
      code: "LIMIT_REACHED",
      error: '1 live session of agent "fake" at once, the most [agents.fake] max_active allows (1)',
      hint: "release one of yours with release_agent (list_agent_sessions lists them), or raise [agents.fake] max_active",
    });
    await agentsText(gaggle.client, "release_agent", { session_id: id });
    expect(await startSession(gaggle.client, {})).not.toBe(id);
  });
});

describe("an edit of the [agents.NAME] tables", () => {
  it("keeps the sessions of an agent whose table is unchanged, and releases those of one that changed", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const { client } = gaggle;
    const kept = await startSession(client, { prompt: "say before" });
    await settled(client, kept, 1);
    const [pid] = agentPids(dirs);
    const other = `\n[agents.other]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(FAKE_AGENT)}]\ncwd = ${JSON.stringify(dirs.root)}\n`;

    // A second agent added: the first one's session and process go on, and start_agent names both.
    writeFileSync(gaggle.configPath, `${agentConfig(dirs)}${other}`);
    await until(
      () => gaggle!.metaJson<{ tools: Array<{ name: string }> }>("get_schema", { server_id: "agents" }),
      ({ tools }) => JSON.stringify(tools.find((tool) => tool.name === "start_agent")).includes('\\"other\\"'),
    );
    expect(await agentsText(client, "prompt_agent", { session_id: kept, prompt: "say after" })).toContain("prompt 2");
    expect(await settled(client, kept, 2)).toMatch(/^ {2}2\. "say after" \(completed in /m);
    expect(agentPids(dirs)).toEqual([pid]);

    // Its table changed: its session is released, saying why, and its process stops.
    writeFileSync(gaggle.configPath, `${agentConfig(dirs, 'permission = "allow"')}${other}`);
    await until(
      () => agentsText(client, "get_agent_status", { session_id: kept }),
      (text) => text.includes("Status: released ([agents.fake] was changed in the config)"),
    );
    expect(await waitGone([pid!])).toEqual([]);
    expect(await transcript(client, kept)).toContain("[agent] after");
  });
});

describe("no agent process outlives gaggle", () => {
  it("even when gaggle is killed with SIGKILL", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const id = await startSession(gaggle.client, { prompt: "say started\nhang" });
    await until(
      () => transcript(gaggle!.client, id),
      (text) => text.includes("[agent] started"),
    );
    const pids = agentPids(dirs);
    process.kill(gaggle.pid, "SIGKILL");
    gaggle = undefined;
    expect(await waitGone(pids)).toEqual([]);
  });
});

describe("an agent that never answers initialize", () => {
  /** [agents.mute]: a process that writes its pid to the fake's pid log and then never speaks. */
  const mute = (dirs: AgentDirs) =>
    ["[agents.mute]", 'command = "sh"', `args = ["-c", ${JSON.stringify(`echo $$ >> '${dirs.pids}'; exec sleep 1000`)}]`].join("\n");

  /** A session of the mute agent with a prompt, once its process has started. */
  async function startMute(): Promise<{ dirs: AgentDirs; id: string; client: Client }> {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs, "", mute(dirs));
    const id = await startSession(gaggle.client, { agent: "mute", prompt: "say hi" });
    await until(
      async () => agentPids(dirs),
      (pids) => pids.length === 1,
    );
    return { dirs, id, client: gaggle.client };
  }

  it("has a turn cancelled with cancel_agent_turn end at once, not when the agent answers", async () => {
    const { id, client } = await startMute();
    expect(await agentsText(client, "cancel_agent_turn", { session_id: id })).toContain("Cancelling prompt 1");
    expect(await settled(client, id, 1)).toMatch(/^ {2}1\. "say hi" \(cancelled in .*: cancelled before it started\)$/m);
  });

  it("is stopped when its session is released, release_agent not waiting for the answer", async () => {
    const { dirs, id, client } = await startMute();
    expect(await agentsText(client, "release_agent", { session_id: id })).toContain("It was working; its turn was cancelled.");
    expect(await waitGone(agentPids(dirs))).toEqual([]);
    expect(await agentsText(client, "get_agent_status", { session_id: id })).toMatch(/^ {2}1\. "say hi" \(cancelled in /m);
  });
});

describe("a session released while the agent makes it", () => {
  it("is closed at the agent once made, while the principal's other session in that process runs on", async () => {
    const dirs = agentDirs();
    const gate = join(dirs.dir, "open");
    gaggle = await startAgentsGaggle(dirs, "", "", undefined, { FAKE_ACP_NEW_GATE: gate });
    const { client } = gaggle;
    const made = () => (existsSync(dirs.state) ? readdirSync(dirs.state).sort() : []);
    writeFileSync(gate, "");
    const first = await startSession(client, {});
    const [firsts] = await until(made, (files) => files.length === 1);
    rmSync(gate);
    const second = await startSession(client, {});
    await until(
      () => existsSync(`${gate}.waiting`),
      (waiting) => waiting,
    );
    await agentsText(client, "release_agent", { session_id: second });
    writeFileSync(gate, "");
    const files = await until(made, (found) => found.some((file) => file.endsWith(".closed")));
    const seconds = files.find((file) => file.endsWith(".json") && file !== firsts)!;
    expect(files).toEqual([firsts, seconds, seconds.replace(/\.json$/, ".closed")].sort());
    // One process served both, and serves the first still.
    expect(agentPids(dirs)).toHaveLength(1);
    await agentsText(client, "prompt_agent", { session_id: first, prompt: "say still here" });
    expect(await settled(client, first, 1)).toMatch(/^ {2}1\. "say still here" \(completed/m);
  });
});
