// An agent's permission request: a form elicitation to the client whose prompt the turn runs, its options as
// choices; where that client cannot be asked, the agent's permission policy; unanswered, rejected after a while.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type ElicitRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { RunningGaggle } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { agentDirs, agentsText, settled, startAgentsGaggle, startSession, transcript, type AgentDirs } from "./helpers.js";

let gaggle: RunningGaggle | undefined;
afterEach(async () => {
  await gaggle?.close();
  gaggle = undefined;
});

/** A client that declares elicitation and answers each question with `answer`; what it was asked is kept. */
function askingClient(answer: (request: ElicitRequest) => Promise<Record<string, unknown>>): { client: Client; asked: ElicitRequest[] } {
  const asked: ElicitRequest[] = [];
  const client = new Client({ name: "person", version: "0.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request);
    return (await answer(request)) as never;
  });
  return { client, asked };
}

async function writeThrough(dirs: AgentDirs, agent: string, client?: Client): Promise<{ text: string; file: string }> {
  gaggle = await startAgentsGaggle(dirs, agent, "", client);
  const file = join(dirs.root, "notes.txt");
  const id = await startSession(gaggle.client, { prompt: `write ${file} hello from the agent` });
  await settled(gaggle.client, id, 1);
  return { text: await transcript(gaggle.client, id), file };
}

describe("permission requests", () => {
  it("reach the person as a form elicitation; accepting an allow option lets the write through", async () => {
    const dirs = agentDirs();
    const { client, asked } = askingClient(async () => ({ action: "accept", content: { decision: "yes" } }));
    const { text, file } = await writeThrough(dirs, "", client);
    expect(asked).toHaveLength(1);
    const params = asked[0]!.params as { message: string; requestedSchema: { properties: Record<string, unknown> } };
    expect(params.message).toMatch(/^Agent "fake" \(session [0-9a-f-]{36}\) asks permission: Write .*notes\.txt$/);
    expect(params.requestedSchema.properties.decision).toEqual({
      type: "string",
      title: "Decision",
      oneOf: [
        { const: "yes", title: "Allow once" },
        { const: "no", title: "Reject" },
      ],
    });
    expect(text).toContain("[permission] the person chose Allow once (allow_once)");
    expect(text).toContain(`wrote ${file}`);
    expect(readFileSync(file, "utf8")).toBe("hello from the agent");
  });

  it("reject the request when the person declines", async () => {
    const dirs = agentDirs();
    const { client } = askingClient(async () => ({ action: "decline" }));
    const { text, file } = await writeThrough(dirs, "", client);
    expect(text).toContain("[permission] the person declined: rejected");
    expect(text).toContain("permission refused (no)");
    expect(existsSync(file)).toBe(false);
  });

  it("are rejected when nobody answers within permission_timeout_seconds, and the transcript says so", async () => {
    const dirs = agentDirs();
    const { client } = askingClient(() => new Promise(() => {}));
    const { text, file } = await writeThrough(dirs, "permission_timeout_seconds = 1", client);
    expect(text).toContain("[permission] unanswered after 1 s: rejected");
    expect(text).toContain("permission refused (no)");
    expect(existsSync(file)).toBe(false);
  });

  it("are withdrawn from the person when the turn is cancelled, and answered cancelled to the agent", async () => {
    const dirs = agentDirs();
    const { client, asked } = askingClient(() => new Promise(() => {}));
    gaggle = await startAgentsGaggle(dirs, "", "", client);
    const file = join(dirs.root, "never.txt");
    const id = await startSession(gaggle.client, { prompt: `write ${file} never written` });
    await until(
      () => asked.length,
      (count) => count === 1,
    );
    await agentsText(gaggle.client, "cancel_agent_turn", { session_id: id });
    expect(await settled(gaggle.client, id, 1)).toMatch(/^ {2}1\. .* \(cancelled in /m);
    const text = await transcript(gaggle.client, id);
    expect(text).toContain("[permission] withdrawn: the turn was cancelled, or the agent took the request back");
    expect(text).toContain("[agent] permission cancelled");
    expect(existsSync(file)).toBe(false);
  });

  it('follow the policy when the client cannot be asked: "allow" lets the write through', async () => {
    const dirs = agentDirs();
    const { text, file } = await writeThrough(dirs, 'permission = "allow"');
    expect(text).toContain('[permission] permission = "allow" allows this edit tool call: Allow once');
    expect(readFileSync(file, "utf8")).toBe("hello from the agent");
  });

  it("are rejected unasked when the tool call reaches outside the session's roots, whatever the policy", async () => {
    const dirs = agentDirs();
    const { client, asked } = askingClient(async () => ({ action: "accept", content: { decision: "yes" } }));
    gaggle = await startAgentsGaggle(dirs, 'permission = "allow"', "", client);
    const file = join(dirs.outside, "escaped.txt");
    const id = await startSession(gaggle.client, { prompt: `write ${file} from outside` });
    await settled(gaggle.client, id, 1);
    const text = await transcript(gaggle.client, id);
    expect(asked).toHaveLength(0);
    expect(text).toContain(`[permission] it reaches ${file}, outside the session's roots (${dirs.root}): rejected`);
    expect(text).toContain("permission refused (no)");
    expect(existsSync(file)).toBe(false);
  });

  it('follow the policy when the client cannot be asked: "ask" fails closed', async () => {
    const dirs = agentDirs();
    const { text, file } = await writeThrough(dirs, "");
    expect(text).toContain('[permission] no person could be asked and permission = "ask": rejected');
    expect(text).toContain("permission refused (no)");
    expect(existsSync(file)).toBe(false);
  });

  it('follow the policy when the client cannot be asked: "allow_reads" rejects an edit', async () => {
    const dirs = agentDirs();
    const { text, file } = await writeThrough(dirs, 'permission = "allow_reads"');
    expect(text).toContain('[permission] permission = "allow_reads" rejects this edit tool call');
    expect(existsSync(file)).toBe(false);
  });
});
