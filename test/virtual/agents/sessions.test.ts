// Agent sessions over ACP: one agent process serves every turn of every session, and the transcript shows what the
// agent streamed (message text, thoughts, tool calls, plans) as session/update delivered it.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { failureOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { listen } from "../../helpers/notifications.js";
import { until } from "../../helpers/poll.js";
import { waitGone } from "../../helpers/processes.js";
import { FAKE_AGENT, agentDirs, agentPids, agentsText, callAgents, settled, startAgentsGaggle, startSession, transcript } from "./helpers.js";

async function readText(client: Client, uri: string): Promise<string> {
  const { contents } = await client.readResource({ uri });
  return contents[0] && "text" in contents[0] ? contents[0].text : "";
}

let gaggle: RunningGaggle | undefined;
afterEach(async () => {
  await gaggle?.close();
  gaggle = undefined;
});

describe("agent sessions", () => {
  it("runs several turns of several sessions on one agent process, and the transcript shows what was streamed", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const { client } = gaggle;
    const first = await startSession(client, {
      agent: "fake",
      prompt: "think about it\nplan read | write\ntool Looking around\nsay hello there\nwhoami",
    });
    await settled(client, first, 1);
    await agentsText(client, "prompt_agent", { session_id: first, prompt: "whoami" });
    await settled(client, first, 2);
    const second = await startSession(client, { prompt: "whoami" });
    await settled(client, second, 1);

    const text = await transcript(client, first);
    expect(text).toContain("[thought] about it");
    expect(text).toMatch(/\[plan\] \n {2}\[in_progress\] read\n {2}\[pending\] write/);
    expect(text).toMatch(/\[tool\] Looking around \(other, pending\) #call-\d+/);
    expect(text).toMatch(/\[tool\] #call-\d+: completed/);
    // Two chunks, joined into one line.
    expect(text).toContain("[agent] hello there\n");
    const pids = agentPids(dirs);
    expect(pids).toHaveLength(1);
    expect(text).toContain(`pid ${pids[0]} turn 1`);
    expect(text).toContain(`pid ${pids[0]} turn 2`);
    expect(await transcript(client, second)).toContain(`pid ${pids[0]} turn 1`);

    const status = await agentsText(client, "get_agent_status", { session_id: first });
    expect(status).toMatch(/^ {2}1\. .* \(completed in /m);
    expect(status).toContain(`Agent: fake (process ${pids[0]})`);
    const list = await agentsText(client, "list_agent_sessions", {});
    expect(list).toContain(first);
    expect(list).toContain(second);
  });

  it("writes a message chunk naming no message, after a named message, on a line of its own", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const id = await startSession(gaggle.client, { prompt: "say the answer\nnotice a notice of the agent's\nsay more" });
    await settled(gaggle.client, id, 1);
    const text = await transcript(gaggle.client, id);
    expect(text).toContain("\n[agent] the answer\n[agent] a notice of the agent's\n[agent] more\n");
  });

  it("pages the transcript by lines", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const id = await startSession(gaggle.client, { prompt: "say one\nthink two\nsay three" });
    await settled(gaggle.client, id, 1);
    // Line 0 opens the session, lines 1-3 are the prompt.
    const page = await agentsText(gaggle.client, "get_agent_output", { session_id: id, offset: 4, limit: 2 });
    expect(page).toMatch(/=== Lines 4-5 of \d+ ===\n\[agent\] one\n\[thought\] two$/m);
    expect(page).toContain("=== More: offset=6 ===");
  });

  it("tells the client that sent a prompt when its turn ends: a log message and resources/updated for the transcript", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const heard = listen(gaggle.client);
    const id = await startSession(gaggle.client, { prompt: "say hi" });
    await until(
      () => heard.logs.length,
      (count) => count >= 1,
    );
    const uri = `agents://sessions/${id}/transcript`;
    expect(heard.logs[0]).toMatchObject({
      level: "info",
      logger: "agents",
      data: { session: id, agent: "fake", prompt: 1, status: "completed", stop_reason: "end_turn", queued: 0, output: uri },
    });
    await until(
      () => heard.updated,
      (updated) => updated.includes(uri),
    );
  });

  it("tells a subscriber of the transcript resource that it grew while the turn still runs", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const { client } = gaggle;
    const id = await startSession(client, {});
    const uri = `agents://sessions/${id}/transcript`;
    await client.subscribeResource({ uri });
    await until(
      () => agentsText(client, "get_agent_status", { session_id: id }),
      (text) => text.includes("ACP session: fake-"),
    );
    const heard = listen(client);
    await agentsText(client, "prompt_agent", { session_id: id, prompt: "say streaming now\nhang" });
    await until(
      async () => ({ updates: heard.updated.filter((updated) => updated === uri).length, text: await readText(client, uri) }),
      ({ updates, text }) => updates >= 1 && text.includes("[agent] streaming now"),
    );
    expect(await agentsText(client, "get_agent_status", { session_id: id })).toMatch(/Status: working on prompt 1/);
    // No turn has ended: what the subscriber heard came from the transcript growing.
    expect(heard.logs).toEqual([]);
    await agentsText(client, "cancel_agent_turn", { session_id: id });
  });

  it("fails a session whose agent exits before initializing, saying how it ended and what it wrote to stderr", async () => {
    const dirs = agentDirs();
    const broken = `[agents.broken]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ["-e", "console.error('no credentials here'); process.exit(3)"]\n`;
    gaggle = await startAgentsGaggle(dirs, "", broken);
    const id = await startSession(gaggle.client, { agent: "broken", prompt: "say hi" });
    const status = await settled(gaggle.client, id, 1);
    expect(status).toContain('agent "broken" did not initialize over ACP: it exited (code 3) before answering initialize');
    expect(await transcript(gaggle.client, id)).toContain("its stderr:\nno credentials here");
  });

  it("fails a session whose agent exits before answering session/new, saying how it ended and what it wrote to stderr", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs, "", "", undefined, { FAKE_ACP_NEW_CRASH: "Error: not signed in" });
    const id = await startSession(gaggle.client, { prompt: "say hi" });
    expect(await settled(gaggle.client, id, 1)).toContain(
      `Status: failed (agent "fake"'s process ended before it answered session/new (exit code 3; stderr: Error: not signed in))`,
    );
  });

  it("stops the agent's process when the only session it started fails to open", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs, "", "", undefined, { FAKE_ACP_NEW_REFUSE: "no model configured" });
    const id = await startSession(gaggle.client, { prompt: "say hi" });
    expect(await settled(gaggle.client, id, 1)).toContain("no model configured");
    const pids = agentPids(dirs);
    expect(pids).toHaveLength(1);
    expect(await waitGone(pids)).toEqual([]);
  });

  it("refuses an unknown agent, naming the ones there are", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const failure = failureOf(await callAgents(gaggle.client, "start_agent", { agent: "nope" }));
    expect(failure).toMatchObject({ code: "INVALID_ARGS", error: 'no agent named "nope"; the agents are "fake"' });
  });

  it("refuses a session of an agent whose configured folder is not there, naming the key to fix", async () => {
    const dirs = agentDirs();
    const missing = join(dirs.dir, "missing");
    const agent = (name: string, key: string) =>
      `[agents.${name}]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(FAKE_AGENT)}]\n${key} = ${key === "cwd" ? JSON.stringify(missing) : `[${JSON.stringify(missing)}]`}\n`;
    gaggle = await startAgentsGaggle(dirs, "", `${agent("nocwd", "cwd")}\n${agent("noroot", "roots")}`);
    expect(failureOf(await callAgents(gaggle.client, "start_agent", { agent: "nocwd", prompt: "say hi" }))).toMatchObject({
      code: "SERVER_FAILED",
      error: `agent "nocwd": its folder ${missing} ([agents.nocwd] cwd) is not a directory`,
      hint: "create it, or set [agents.nocwd] cwd",
    });
    expect(failureOf(await callAgents(gaggle.client, "start_agent", { agent: "noroot", prompt: "say hi" }))).toMatchObject({
      code: "SERVER_FAILED",
      error: `agent "noroot": its root ${missing} ([agents.noroot] roots) is not a directory`,
      hint: "create it, or set [agents.noroot] roots",
    });
  });

  it("refuses a cwd that is not a folder, saying where it looked and what to give", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    expect(failureOf(await callAgents(gaggle.client, "start_agent", { cwd: "nowhere" }))).toEqual({
      status: "failed",
      code: "INVALID_ARGS",
      error: `cwd "nowhere" is not a directory (resolved to ${join(dirs.root, "nowhere")})`,
      hint: `give a folder that exists inside [agents.fake] roots (${dirs.root}); a relative one is taken from ${dirs.root}`,
    });
  });

  it("closes a released session in the agent (session/close) while the agent serves others", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const { client } = gaggle;
    const [first, second] = [await startSession(client, { prompt: "say one" }), await startSession(client, { prompt: "say two" })];
    await settled(client, first, 1);
    await settled(client, second, 1);
    const acpId = /^ACP session: (\S+)$/m.exec(await agentsText(client, "get_agent_status", { session_id: first }))![1]!;
    await agentsText(client, "release_agent", { session_id: first });
    await until(
      () => existsSync(join(dirs.state, `${acpId}.closed`)),
      (closed) => closed,
    );
    await agentsText(client, "prompt_agent", { session_id: second, prompt: "say still here" });
    expect(await settled(client, second, 2)).toMatch(/^ {2}2\. .* \(completed in /m);
    expect(agentPids(dirs)).toHaveLength(1);
  });

  it("stops the agent process and its descendants when its last session is released, and at shutdown", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs);
    const { client } = gaggle;
    const id = await startSession(client, { prompt: "spawn" });
    await settled(client, id, 1);
    // The agent, and a descendant it started in a process group of its own.
    const [pid, descendant] = agentPids(dirs);
    expect(await transcript(client, id)).toContain(`spawned ${descendant}`);
    expect(await agentsText(client, "release_agent", { session_id: id })).toMatch(/^Released agent session .* It was idle\.$/);
    expect(await waitGone([pid!, descendant!])).toEqual([]);
    expect(await transcript(client, id)).toContain("[gaggle] released: released with release_agent");

    const again = await startSession(client, { prompt: "say again" });
    await settled(client, again, 1);
    const pids = agentPids(dirs);
    expect(pids).toHaveLength(3);
    await gaggle.close();
    gaggle = undefined;
    expect(await waitGone(pids)).toEqual([]);
  });
});
