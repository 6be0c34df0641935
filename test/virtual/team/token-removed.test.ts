// A person whose token leaves the config: the goslings they started and the members of the teams they lead are
// stopped, and the members' URLs stop letting anyone in. Another person's goslings and members work on.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { failureOf, textOf } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { isAlive, waitGone } from "../../helpers/processes.js";
import { connectClient } from "../../helpers/raw-http.js";
import { idOf, pidsOf, readRuns, type FakeRun } from "../goose/helpers.js";
import { branches, makeRepo, promptOf, teamConfig, type TeamStatus } from "./helpers.js";

const ANN = "ann-token-5Qw8zR2kTy";
const BOB = "bob-token-9Lm3vX6pHd";

let gaggle: HttpGaggle | undefined;
const clients: Client[] = [];
/** Fake goose turns that stop only when the test opens their gate: a failed test kills them, by pid, before gaggle stops. */
const heldPids: number[] = [];
afterEach(async () => {
  for (const pid of heldPids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await gaggle?.stop();
  gaggle = undefined;
});

const call = (client: Client, server: string, tool: string, args: Record<string, unknown>) =>
  client.callTool({ name: "execute_child_tool", arguments: { server_id: server, tool_name: tool, arguments: args } }) as Promise<CallToolResult>;

async function text(client: Client, server: string, tool: string, args: Record<string, unknown>): Promise<string> {
  const result = await call(client, server, tool, args);
  if (result.isError) throw new Error(`${server}.${tool} failed: ${textOf(result)}`);
  return textOf(result);
}

/** The fake goose's run whose prompt holds `words`, once it has started. */
async function runOf(dir: string, words: string): Promise<FakeRun> {
  const found = await until(
    () => readRuns(join(dir, "argv.jsonl")).find((run) => promptOf(run).includes(words)),
    (run) => run !== undefined,
    15_000,
  );
  if (!found) throw new Error(`no goose run was started with "${words}"`);
  return found;
}

function memberUrlOf(run: FakeRun): string {
  return run.argv[run.argv.indexOf("--with-streamable-http-extension") + 1]!;
}

async function connectMember(url: string): Promise<Client> {
  const { client } = await connectClient(url, { name: "member" });
  clients.push(client);
  return client;
}

/** The config of ann and bob's gaggle in `dir`, a repository, with the tokens given. */
function tokensConfig(dir: string, tokens: Record<string, string>, team = ""): string {
  const named = Object.entries(tokens).map(([name, token]) => `${name} = "${token}"`);
  return teamConfig(dir, team, "", `auth_tokens = { ${named.join(", ")} }`);
}

/** Whether gaggle's log has a line holding `words` about `principal`. */
function logged(gaggle: HttpGaggle, words: string, principal: string): boolean {
  return gaggle
    .stderr()
    .split("\n")
    .some((line) => line.includes(words) && line.includes(`"principal":"${principal}"`));
}

describe("a person whose token leaves the config", () => {
  it("has their goslings and their teams' members stopped and the members' URLs revoked; another person's work on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-token-team-"));
    const config = (tokens: Record<string, string>) => tokensConfig(dir, tokens);
    gaggle = await startHttpGaggle(config({ ann: ANN, bob: BOB }), { env: { XDG_STATE_HOME: join(dir, "xdg-state") } });
    const ann = await gaggle.connect({ name: "ann", headers: { authorization: `Bearer ${ANN}` } });
    const bob = await gaggle.connect({ name: "bob", headers: { authorization: `Bearer ${BOB}` } });

    // Each starts a gosling and a team member that work for ever.
    const annsGosling = idOf(await text(ann, "goose", "run_goose", { prompt: "[hang] ann's own" }));
    const bobsGosling = idOf(await text(bob, "goose", "run_goose", { prompt: "[hang] bob's own" }));
    await text(ann, "team", "gg_team_manage", { team_id: "t-ann", prompt: "[hang] ann's member" });
    const bobsMember = JSON.parse(await text(bob, "team", "gg_team_manage", { team_id: "t-bob", prompt: "[hang] bob's member" })) as {
      agent_id: string;
    };
    const [annsOwn, annsMember, bobsOwn, bobsMemberRun] = await Promise.all(
      ["ann's own", "ann's member", "bob's own", "bob's member"].map((words) => runOf(dir, words)),
    );
    const annsUrl = memberUrlOf(annsMember!);
    const bobsUrl = memberUrlOf(bobsMemberRun!);
    // Before the edit, a member's URL lets its member in.
    await connectMember(annsUrl);

    writeFileSync(gaggle.config, config({ bob: BOB }));
    expect(await waitGone([annsOwn!.pid, annsMember!.pid])).toEqual([]);
    await expect(connectMember(annsUrl)).rejects.toThrow(/unknown or revoked member credential/);

    // Bob's gosling and member work on, and his member's URL still lets it in.
    expect([bobsOwn!.pid, bobsMemberRun!.pid].map(isAlive)).toEqual([true, true]);
    expect(await text(bob, "goose", "get_gosling_status", { process_id: bobsGosling })).toMatch(/Activity: WORKING/);
    const status = JSON.parse(await text(bob, "team", "gg_team_status", { team_id: "t-bob" })) as TeamStatus;
    expect(status.members).toEqual([expect.objectContaining({ agent_id: bobsMember.agent_id, state: "working" })]);
    const member = await connectMember(bobsUrl);
    expect((await member.listTools()).tools.length).toBeGreaterThan(0);

    // Let in again, ann finds her gosling released and her member stopped.
    writeFileSync(gaggle.config, config({ ann: ANN, bob: BOB }));
    const back = await until(
      () =>
        gaggle!
          .connect({ name: "ann again", headers: { authorization: `Bearer ${ANN}` } })
          .then((client) => client)
          .catch(() => undefined),
      (client) => client !== undefined,
    );
    clients.push(back!);
    expect(await text(back!, "goose", "get_gosling_status", { process_id: annsGosling })).toMatch(/Activity: RELEASED/);
    const hers = JSON.parse(await text(back!, "team", "gg_team_status", { team_id: "t-ann" })) as TeamStatus;
    expect(hers.members.map((row) => row.state)).toEqual(["exited"]);
    expect(await text(back!, "goose", "get_gosling_status", { process_id: hers.members[0]!.gosling_id! })).toMatch(/Activity: RELEASED/);
  });
});

describe("a team add of a person whose token leaves the config while the add is in flight", () => {
  it("never starts the member the add was starting, and leaves no team of it behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-token-team-"));
    // The worktree's init script says it runs, then holds the add open until the test writes a line into the fifo.
    const gate = join(dir, "gate");
    const running = join(dir, "init-running");
    execFileSync("mkfifo", [gate]);
    makeRepo(dir, { ".agents/gg/worktree-init.sh": `#!/bin/sh\ntouch ${JSON.stringify(running)}\nread line < ${JSON.stringify(gate)}\n` });
    const team = `worktrees_dir = ${JSON.stringify(join(dir, "worktrees"))}`;
    gaggle = await startHttpGaggle(tokensConfig(dir, { ann: ANN, bob: BOB }, team), { env: { XDG_STATE_HOME: join(dir, "xdg-state") } });
    const ann = await gaggle.connect({ name: "ann", headers: { authorization: `Bearer ${ANN}` } });
    clients.push(ann);
    // Its answer never comes: ann's session closes with her token.
    void call(ann, "team", "gg_team_manage", { team_id: "t-ann", worktree_name: "w1", prompt: "[hang] ann's late member" }).catch(() => {});
    await until(
      () => existsSync(running),
      (runs) => runs,
    );

    writeFileSync(gaggle.config, tokensConfig(dir, { bob: BOB }, team));
    await until(
      () => logged(gaggle!, "its work in the built-in children is stopped", "ann"),
      (stopped) => stopped,
    );
    // Ann's work was stopped with her add in flight: the add now goes on, starts no member, and the call ends.
    await writeFile(gate, "go\n");
    await until(
      () => logged(gaggle!, "calls in flight of a gone principal ended", "ann"),
      (stopped) => stopped,
    );
    // No gosling of the member ran.
    const late = readRuns(join(dir, "argv.jsonl")).filter((run) => promptOf(run).includes("ann's late member"));
    expect(late).toEqual([]);
    expect(await waitGone(late.map((run) => run.pid))).toEqual([]);

    // Let in again, ann finds no team t-ann: its first add failed, and the worktree it made went with it.
    writeFileSync(gaggle.config, tokensConfig(dir, { ann: ANN, bob: BOB }, team));
    const back = await until(
      () =>
        gaggle!
          .connect({ name: "ann again", headers: { authorization: `Bearer ${ANN}` } })
          .then((client) => client)
          .catch(() => undefined),
      (client) => client !== undefined,
    );
    clients.push(back!);
    expect(failureOf(await call(back!, "team", "gg_team_status", { team_id: "t-ann" })).code).toBe("NOT_FOUND");
    expect(branches(dir)).toEqual(["main"]);
  });
});

describe("a person whose token leaves the config while the first stop of their work is still under way", () => {
  it("stops their work once: a call in flight that ends meanwhile is followed by one more stop, and nothing is left running", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-token-team-"));
    // Two gates the test opens: `hold` ends the first member's stopped turn, `gate` the second member's worktree init script.
    const hold = join(dir, "hold");
    const gate = join(dir, "gate");
    const running = join(dir, "init-running");
    execFileSync("mkfifo", [hold]);
    execFileSync("mkfifo", [gate]);
    makeRepo(dir, { ".agents/gg/worktree-init.sh": `#!/bin/sh\ntouch ${JSON.stringify(running)}\nread line < ${JSON.stringify(gate)}\n` });
    const team = `worktrees_dir = ${JSON.stringify(join(dir, "worktrees"))}`;
    // The grace before a kill outlasts the test: the held turn ends when the test opens its gate.
    const config = (tokens: Record<string, string>) =>
      teamConfig(
        dir,
        team,
        "",
        `auth_tokens = { ${Object.entries(tokens)
          .map(([name, token]) => `${name} = "${token}"`)
          .join(", ")} }\nshutdown_grace_ms = 120000`,
      );
    gaggle = await startHttpGaggle(config({ ann: ANN, bob: BOB }), { env: { XDG_STATE_HOME: join(dir, "xdg-state") } });
    const ann = await gaggle.connect({ name: "ann", headers: { authorization: `Bearer ${ANN}` } });
    clients.push(ann);
    const first = JSON.parse(
      await text(ann, "team", "gg_team_manage", { team_id: "t-ann", prompt: `[hang] [hold-term ${hold}] ann's held member` }),
    ) as {
      agent_id: string;
    };
    heldPids.push((await runOf(dir, "ann's held member")).pid);
    // Ann's second add is in flight, held in its worktree's init script; its answer never comes (her session closes).
    void call(ann, "team", "gg_team_manage", { team_id: "t-ann", worktree_name: "w2", prompt: "ann's late member" }).catch(() => {});
    await until(
      () => existsSync(running),
      (runs) => runs,
    );

    writeFileSync(gaggle.config, config({ bob: BOB }));
    // The first stop is under way: it has asked the first member's turn to stop, and waits for it.
    await until(
      () => existsSync(`${hold}.term`),
      (asked) => asked,
    );
    const stoppedLines = (words: string) =>
      gaggle!
        .stderr()
        .split("\n")
        .filter((line) => line.includes(words) && line.includes(`"principal":"ann"`));
    expect(stoppedLines("its work in the built-in children is stopped")).toEqual([]);
    // The add goes on while the first stop waits: it starts no member, and its worktree goes with it.
    await writeFile(gate, "go\n");
    await until(
      () => branches(dir),
      (names) => names.length === 1,
    );
    expect(branches(dir)).toEqual(["main"]);
    expect(stoppedLines("calls in flight of a gone principal ended")).toEqual([]);

    // The first stop ends; the second, for the call that was in flight, follows it.
    await writeFile(hold, "go\n");
    await until(
      () => stoppedLines("calls in flight of a gone principal ended").length,
      (count) => count > 0,
    );
    expect(stoppedLines("its work in the built-in children is stopped")).toHaveLength(1);
    const second = stoppedLines("calls in flight of a gone principal ended");
    expect(second).toHaveLength(1);
    expect(second[0]).toContain(`"child":"team"`);
    expect(second[0]).toContain(`"calls":1`);
    expect(readRuns(join(dir, "argv.jsonl")).filter((run) => promptOf(run).includes("ann's late member"))).toEqual([]);
    expect(await waitGone(pidsOf(readRuns(join(dir, "argv.jsonl"))))).toEqual([]);

    // Let in again, ann finds her first member stopped once, and no second member.
    writeFileSync(gaggle.config, config({ ann: ANN, bob: BOB }));
    const back = await until(
      () =>
        gaggle!
          .connect({ name: "ann again", headers: { authorization: `Bearer ${ANN}` } })
          .then((client) => client)
          .catch(() => undefined),
      (client) => client !== undefined,
    );
    clients.push(back!);
    const hers = JSON.parse(await text(back!, "team", "gg_team_status", { team_id: "t-ann" })) as TeamStatus;
    expect(hers.members.map((row) => [row.agent_id, row.state])).toEqual([[first.agent_id, "exited"]]);
    const transcript = await text(back!, "goose", "get_gosling_output", { process_id: hers.members[0]!.gosling_id!, full_output: true });
    expect(transcript.match(/=== released: /g)).toHaveLength(1);
  });
});

describe("a person whose token leaves the config with a message waiting for a member and a call in flight", () => {
  it("has the member restarted by no one: the call ending after the first stop leaves the message waiting, and the second stop finds nothing running", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-token-team-"));
    const gate = join(dir, "gate");
    const running = join(dir, "init-running");
    execFileSync("mkfifo", [gate]);
    makeRepo(dir, { ".agents/gg/worktree-init.sh": `#!/bin/sh\ntouch ${JSON.stringify(running)}\nread line < ${JSON.stringify(gate)}\n` });
    const team = `worktrees_dir = ${JSON.stringify(join(dir, "worktrees"))}`;
    gaggle = await startHttpGaggle(tokensConfig(dir, { ann: ANN, bob: BOB }, team), { env: { XDG_STATE_HOME: join(dir, "xdg-state") } });
    const ann = await gaggle.connect({ name: "ann", headers: { authorization: `Bearer ${ANN}` } });
    clients.push(ann);
    const first = JSON.parse(await text(ann, "team", "gg_team_manage", { team_id: "t-ann", prompt: "[hang] ann's busy member" })) as {
      agent_id: string;
    };
    const busy = await runOf(dir, "ann's busy member");
    // Busy: the message waits for its turn to end.
    const receipt = JSON.parse(
      await text(ann, "team", "gg_team_message", { team_id: "t-ann", recipient_agent_id: first.agent_id, message: "ann's waiting message" }),
    ) as { delivery_ids: string[] };
    // Ann's second add is in flight, held in its worktree's init script; its answer never comes (her session closes).
    void call(ann, "team", "gg_team_manage", { team_id: "t-ann", worktree_name: "w2", prompt: "ann's late member" }).catch(() => {});
    await until(
      () => existsSync(running),
      (runs) => runs,
    );

    writeFileSync(gaggle.config, tokensConfig(dir, { bob: BOB }, team));
    await until(
      () => logged(gaggle!, "its work in the built-in children is stopped", "ann"),
      (stopped) => stopped,
    );
    expect(await waitGone([busy.pid])).toEqual([]);
    // The first stop is over; the add in flight now ends (starting no member), and with it the second stop runs.
    await writeFile(gate, "go\n");
    await until(
      () => logged(gaggle!, "calls in flight of a gone principal ended", "ann"),
      (stopped) => stopped,
    );
    const runs = () => readRuns(join(dir, "argv.jsonl"));
    expect(runs().filter((run) => promptOf(run).includes("ann's waiting message"))).toEqual([]);
    expect(runs().filter((run) => promptOf(run).includes("ann's late member"))).toEqual([]);
    expect(await waitGone(pidsOf(runs()))).toEqual([]);

    // Let in again, ann finds the message still waiting for her member, which her next team call starts again.
    writeFileSync(gaggle.config, tokensConfig(dir, { ann: ANN, bob: BOB }, team));
    const back = await until(
      () =>
        gaggle!
          .connect({ name: "ann again", headers: { authorization: `Bearer ${ANN}` } })
          .then((client) => client)
          .catch(() => undefined),
      (client) => client !== undefined,
    );
    clients.push(back!);
    // Her member's one gosling, the one the first stop released: none was started for the message.
    expect(await text(back!, "goose", "list_goslings", {})).toContain("Found 1 gosling");
    const hers = JSON.parse(await text(back!, "team", "gg_team_status", { team_id: "t-ann" })) as TeamStatus;
    expect(hers.members.map((row) => [row.agent_id, row.state])).toEqual([[first.agent_id, "exited"]]);
    expect(hers.deliveries.find((row) => row.delivery_id === receipt.delivery_ids[0])).toMatchObject({
      state: "deferred",
      reason: "the team child was closed; the message waits for the next team call",
    });
    expect(
      await until(
        () => runs().filter((run) => promptOf(run).includes("ann's waiting message")).length,
        (count) => count > 0,
      ),
    ).toBe(1);
  });
});
