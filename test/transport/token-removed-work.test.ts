// The work a principal started in the built-in children ends when its token leaves the config: nobody could see or
// stop it any more. Another principal's work, and the work of a principal whose token only changed its text, run on.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListRootsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfigText } from "../../src/config/index.js";
import { createGaggle } from "../../src/gateway/gaggle.js";
import { serveHttp } from "../../src/transport/http-server.js";
import { textOf } from "../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { until } from "../helpers/poll.js";
import { descendants, isAlive, waitGone } from "../helpers/processes.js";
import { connectClient, INITIALIZE, postMcp } from "../helpers/raw-http.js";
import { agentConfig, agentDirs, agentPids, startSession } from "../virtual/agents/helpers.js";
import { ended, processJson, run, status, type Status } from "../virtual/process/helpers.js";

const ALICE = "alice-token-3Kd8sQ1wZm";
const BOB = "bob-token-7Xr2nV5cLp";
const BOB_AGAIN = "bob-token-4Tg9hB6yWe";

const gaggles: HttpGaggle[] = [];
/** What a test served in this process, closed after it. */
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.allSettled(gaggles.splice(0).map((gaggle) => gaggle.stop()));
  for (const close of closers.splice(0)) await close().catch(() => {});
});

/** Process and duckdb children, goose and team off; `named`: the bearer tokens, none for an open loopback listener. */
function config(dir: string, named: Record<string, string>): string {
  const tokens = Object.entries(named).map(([name, token]) => `${name} = "${token}"`);
  return [
    `[gateway]\nstate_dir = ${JSON.stringify(join(dir, "state"))}\n`,
    tokens.length > 0 ? `[gateway.auth_tokens]\n${tokens.join("\n")}\n` : "",
    "[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n",
    `[virtual.duckdb]\nenabled = true\nroots = [${JSON.stringify(dir)}]\nread_write = true\n`,
  ].join("\n");
}

async function start(named: Record<string, string>): Promise<{ gaggle: HttpGaggle; edit: (named: Record<string, string>) => void }> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-token-work-")));
  const gaggle = await startHttpGaggle(config(dir, named));
  gaggles.push(gaggle);
  return { gaggle, edit: (next) => writeFileSync(gaggle.config, config(dir, next)) };
}

const connect = (gaggle: HttpGaggle, token?: string) => gaggle.connect(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });

/** A background shell that starts a sleep of its own and waits for it: its pid, and the sleep's. */
async function sleeper(client: Client, seconds: number): Promise<{ pid: number; sleep: number }> {
  const { pid } = await run(client, `sleep ${seconds} & wait`);
  const [sleep] = await until(
    () => descendants(pid),
    (found) => found.length === 1,
  );
  return { pid, sleep: sleep! };
}

/** Whether `pid` is a live process, as process.kill(pid, 0) answers (it throws ESRCH once the pid is reaped). */
function signalable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function sql(client: Client, query: string): Promise<CallToolResult> {
  return (await client.callTool({
    name: "execute_child_tool",
    arguments: { server_id: "duckdb", tool_name: "duckdb", arguments: { query } },
  })) as CallToolResult;
}

async function rows(client: Client, query: string): Promise<unknown[]> {
  const result = await sql(client, query);
  if (result.isError) throw new Error(`${query} failed: ${textOf(result)}`);
  return (JSON.parse(textOf(result)) as { rows: unknown[] }).rows;
}

/** The status of an initialize sent with `token`. */
async function initializeStatus(gaggle: HttpGaggle, token: string): Promise<number> {
  return (await postMcp(gaggle.port, INITIALIZE, { authorization: `Bearer ${token}` })).status;
}

/** The log line saying whose work was stopped, once written. */
function stoppedLine(gaggle: HttpGaggle, principal: string): string | undefined {
  return gaggle
    .stderr()
    .split("\n")
    .find((line) => line.includes("principal let in no more") && line.includes(`"principal":"${principal}"`));
}

describe("a principal whose token leaves the config", () => {
  it("has its background processes, with what they started, and its in-memory database stopped; the other principal's run on", async () => {
    const { gaggle, edit } = await start({ alice: ALICE, bob: BOB });
    const alice = await connect(gaggle, ALICE);
    const bob = await connect(gaggle, BOB);
    const alices = await sleeper(alice, 4101);
    const bobs = await sleeper(bob, 4102);
    const done = await run(alice, "true");
    expect((await ended(alice, done.pid)).status).toBe("completed");
    await rows(alice, "create table notes as select 'alice' as who");
    await rows(bob, "create table notes as select 'bob' as who");

    edit({ bob: BOB });
    expect(await waitGone([alices.pid, alices.sleep])).toEqual([]);
    await until(
      () => [alices.pid, alices.sleep].some(signalable),
      (any) => !any,
    );
    // The log names the principal and what it held, never a token.
    const line = await until(
      () => stoppedLine(gaggle, "alice"),
      (found) => found !== undefined,
    );
    expect(line).toContain(`process ${alices.pid}`);
    // A process of hers that had ended held nothing to stop.
    expect(line).not.toContain(`process ${done.pid}`);
    expect(gaggle.stderr()).not.toContain(ALICE);

    // Bob's shell and its sleep run on; he lists his process and stops it himself.
    expect([bobs.pid, bobs.sleep].map(isAlive)).toEqual([true, true]);
    const listed = await processJson<{ processes: Array<{ pid: number; status: string; owned: boolean }> }>(bob, "gg_process_status");
    expect(listed.processes).toEqual([expect.objectContaining({ pid: bobs.pid, status: "running", owned: true })]);
    expect(await rows(bob, "select who from notes")).toEqual([{ who: "bob" }]);
    expect((await processJson<Status>(bob, "gg_process_kill", { pid: bobs.pid })).status).toBe("killed");
    expect(await waitGone([bobs.pid, bobs.sleep])).toEqual([]);

    // Let in again, alice finds her process killed and her in-memory database a new one.
    edit({ alice: ALICE, bob: BOB });
    await until(
      () => initializeStatus(gaggle, ALICE),
      (code) => code === 200,
    );
    const back = await connect(gaggle, ALICE);
    expect((await status(back, alices.pid)).status).toBe("killed");
    const missing = await sql(back, "select who from notes");
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain("does not exist");
  });

  it("leaves the work of a principal whose token only changed its text", async () => {
    const { gaggle, edit } = await start({ alice: ALICE, bob: BOB });
    const alice = await connect(gaggle, ALICE);
    const bob = await connect(gaggle, BOB);
    const alices = await sleeper(alice, 4103);
    const bobs = await sleeper(bob, 4104);
    await rows(bob, "create table notes as select 'bob' as who");

    // One edit: bob's token changes its text, alice's leaves. Once alice's work is stopped, bob's would have been too.
    edit({ bob: BOB_AGAIN });
    expect(await waitGone([alices.pid, alices.sleep])).toEqual([]);
    await until(
      () => stoppedLine(gaggle, "alice"),
      (found) => found !== undefined,
    );
    expect(stoppedLine(gaggle, "bob")).toBeUndefined();
    expect(await initializeStatus(gaggle, BOB)).toBe(401);
    expect([bobs.pid, bobs.sleep].map(isAlive)).toEqual([true, true]);
    const again = await connect(gaggle, BOB_AGAIN);
    expect((await status(again, bobs.pid)).status).toBe("running");
    expect(await rows(again, "select who from notes")).toEqual([{ who: "bob" }]);
  });

  it("is the one person an open listener served, once the config names tokens", async () => {
    const { gaggle, edit } = await start({});
    const local = await connect(gaggle);
    const theirs = await sleeper(local, 4105);

    edit({ alice: ALICE });
    expect(await waitGone([theirs.pid, theirs.sleep])).toEqual([]);
    await until(
      () => stoppedLine(gaggle, "local"),
      (found) => found !== undefined,
    );
    const alice = await connect(gaggle, ALICE);
    const listed = await processJson<{ processes: unknown[] }>(alice, "gg_process_status");
    expect(listed.processes).toEqual([]);
  });
});

/**
 * gaggle made in this process from `configText` and served over HTTP with alice's and bob's tokens, and a client for
 * a member (`m1`) of a team of `lead`'s: what gaggle's own agents connect with, a principal of its own.
 */
async function servedInProcess(configText: string, dir: string) {
  const loaded = validateConfigText(configText, join(dir, "children_config.toml"), {});
  const gaggle = createGaggle(loaded, { memberBase: async () => (await listening).localBase });
  const listening = serveHttp(gaggle, { host: "127.0.0.1", port: 0, tokens: { alice: ALICE, bob: BOB } });
  const http = await listening;
  closers.push(
    () => http.close(),
    () => gaggle.close(),
  );
  const member = async (teamId: string, lead: string, options: Parameters<typeof connectClient>[1] = {}) => {
    const { url } = await gaggle.members.urlFor({ teamId, agentId: "m1" }, lead);
    const { client } = await connectClient(url, { name: `${lead}'s member`, ...options });
    closers.unshift(() => client.close());
    return client;
  };
  return { http, member };
}

describe("an agent session whose owner's token leaves the config while the agent makes it", () => {
  it("ends with its owner's agent process, while the other principal's session and process run on", async () => {
    const dirs = agentDirs();
    const gate = join(dirs.dir, "open");
    const tokens = (named: Record<string, string>) =>
      `[gateway.auth_tokens]\n${Object.entries(named)
        .map(([name, token]) => `${name} = "${token}"`)
        .join("\n")}\n`;
    const text = (named: Record<string, string>) =>
      agentConfig(dirs, "", `${tokens(named)}[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n`).replace(
        /^env = .*$/m,
        `env = { FAKE_ACP_PIDS = ${JSON.stringify(dirs.pids)}, FAKE_ACP_STATE = ${JSON.stringify(dirs.state)}, FAKE_ACP_NEW_GATE = ${JSON.stringify(gate)} }`,
      );
    const made = () => (existsSync(dirs.state) ? readdirSync(dirs.state).sort() : []);
    const gaggle = await startHttpGaggle(text({ alice: ALICE, bob: BOB }));
    gaggles.push(gaggle);
    // Bob's session is made with the gate open; Alice's waits at it, in an agent process of her own.
    writeFileSync(gate, "");
    await startSession(await connect(gaggle, BOB), {});
    const [bobs] = await until(made, (files) => files.length === 1);
    rmSync(gate);
    await startSession(await connect(gaggle, ALICE), {});
    await until(
      () => existsSync(`${gate}.waiting`),
      (waiting) => waiting,
    );
    const [bobsPid, alicesPid] = agentPids(dirs);

    writeFileSync(gaggle.config, text({ bob: BOB }));
    await until(
      () => stoppedLine(gaggle, "alice"),
      (line) => line !== undefined,
    );
    writeFileSync(gate, "");
    expect(await waitGone([alicesPid!])).toEqual([]);
    // Nothing of Alice's lives on at the agent: her session was never made, or was closed once made.
    const files = made();
    expect(files.filter((file) => file !== bobs && file.endsWith(".json")).every((file) => files.includes(file.replace(/\.json$/, ".closed")))).toBe(
      true,
    );
    expect(files).toContain(bobs);
    expect(isAlive(bobsPid!)).toBe(true);
  });
});

describe("the members of a team whose lead's token leaves the config", () => {
  it("are let in no more and have their work stopped, while the members of another principal's team keep theirs", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-token-members-")));
    const { http, member } = await servedInProcess(config(dir, { alice: ALICE, bob: BOB }), dir);
    const alices = await member("t-alice", "alice");
    const bobs = await member("t-bob", "bob");
    const alicesRun = await sleeper(alices, 4106);
    const bobsRun = await sleeper(bobs, 4107);
    // A member's in-memory database is its own, not its lead's: only the member's own principal reaches it.
    await rows(alices, "create table notes as select 'alice member' as who");
    await rows(bobs, "create table notes as select 'bob member' as who");

    expect(http.useTokens({ bob: BOB })).toBeUndefined();
    expect(await waitGone([alicesRun.pid, alicesRun.sleep])).toEqual([]);
    await expect(sql(alices, "select 1")).rejects.toThrow(/unknown or revoked member credential/);
    expect([bobsRun.pid, bobsRun.sleep].map(isAlive)).toEqual([true, true]);
    expect(await rows(bobs, "select who from notes")).toEqual([{ who: "bob member" }]);

    // Alice let in again, her member is too, and finds its in-memory database a new one.
    expect(http.useTokens({ alice: ALICE, bob: BOB })).toBeUndefined();
    const again = await member("t-alice", "alice");
    const missing = await sql(again, "select who from notes");
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain("does not exist");
  });

  it("have a call in flight when it left, waiting on the member, end with nothing started", async () => {
    const dirs = agentDirs();
    const rest = `[gateway.auth_tokens]\nalice = "${ALICE}"\nbob = "${BOB}"\n[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n`;
    const { http, member } = await servedInProcess(agentConfig(dirs, "", rest), dirs.dir);
    // Roots offered, so that start_agent awaits the member's answer to roots/list before its session exists.
    const withRoots = { client: { capabilities: { roots: {} } } };
    const alices = await member("t-alice", "alice", withRoots);
    const bobs = await member("t-bob", "bob");
    let roots = () => {};
    const answered = new Promise<void>((resolve) => (roots = resolve));
    let asked = () => {};
    const askedFor = new Promise<void>((resolve) => (asked = resolve));
    alices.setRequestHandler(ListRootsRequestSchema, async () => {
      asked();
      await answered;
      return { roots: [{ uri: pathToFileURL(dirs.root).href }] };
    });
    const alicesRun = await sleeper(alices, 4108);
    const bobsRun = await sleeper(bobs, 4109);

    // The member waits at most 2 s for the answer: its session ends with its lead's token, and no answer comes.
    const starting = alices
      .callTool({ name: "execute_child_tool", arguments: { server_id: "agents", tool_name: "start_agent", arguments: {} } }, undefined, {
        timeout: 2000,
      })
      .then(
        (result) => textOf(result as CallToolResult),
        (error: unknown) => String(error),
      );
    await askedFor;
    expect(http.useTokens({ bob: BOB })).toBeUndefined();
    expect(await waitGone([alicesRun.pid, alicesRun.sleep])).toEqual([]);
    // The member's answer to roots/list reaches no session, and the call starts nothing.
    roots();
    expect(await starting).toMatch(/Request timed out/);
    expect(agentPids(dirs)).toEqual([]);
    expect([bobsRun.pid, bobsRun.sleep].map(isAlive)).toEqual([true, true]);
  });
});
