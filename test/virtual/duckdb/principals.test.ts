// The duckdb child over Streamable HTTP with a token per person: each principal has its own in-memory database and
// its own connection to a database file, so neither reads the other's tables, nor waits behind the other's queries.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf, type Failure } from "../../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle, bearer } from "../../helpers/gaggle-http.js";
import { until } from "../../helpers/poll.js";

const TOKENS = { GAGGLE_TEST_ALICE: "alice-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };

function config(dir: string, settings: string): string {
  return (
    '[gateway]\nauth_tokens = { alice = "${GAGGLE_TEST_ALICE}", bob = "${GAGGLE_TEST_BOB}" }\n' +
    "[virtual.process]\nenabled = false\n[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n" +
    `[virtual.duckdb]\nenabled = true\nroots = [${JSON.stringify(dir)}]\n${settings}`
  );
}

async function sql(client: Client, query: string, database?: string): Promise<CallToolResult> {
  return (await client.callTool({
    name: "execute_child_tool",
    arguments: { server_id: "duckdb", tool_name: "duckdb", arguments: { query, ...(database && { database }) } },
  })) as CallToolResult;
}

async function rows(client: Client, query: string, database?: string): Promise<unknown[]> {
  const result = await sql(client, query, database);
  if (result.isError) throw new Error(`${query} failed: ${textOf(result)}`);
  return (JSON.parse(textOf(result)) as { rows: unknown[] }).rows;
}

function failure(result: CallToolResult): Failure {
  if (!result.isError) throw new Error(`expected a failure, got ${textOf(result)}`);
  return JSON.parse(textOf(result)) as Failure;
}

describe("duckdb tables, per principal over HTTP", () => {
  let gaggle: HttpGaggle;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-duckdb-principals-")));
    gaggle = await startHttpGaggle(config(dir, "read_write = true\n"), { env: TOKENS });
    alice = await gaggle.connect({ name: "alice", ...bearer(TOKENS.GAGGLE_TEST_ALICE) });
    bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
  });
  afterAll(() => gaggle.stop());

  it("keeps one principal's in-memory tables, temporary or not, from another", async () => {
    await rows(alice, "create temp table secret as select 42 as n; create table notes as select 'alice' as who");
    expect(await rows(alice, "select n from secret union all select 7 from notes")).toEqual([{ n: 42 }, { n: 7 }]);
    for (const query of ["select * from secret", "select * from notes"]) {
      expect(failure(await sql(bob, query))).toMatchObject({ code: "EXECUTION_ERROR", error: expect.stringContaining("does not exist") });
    }
    // Bob's own table of the same name is his.
    await rows(bob, "create table notes as select 'bob' as who");
    expect(await rows(alice, "select who from notes")).toEqual([{ who: "alice" }]);
  });

  it("shares a database file's tables, and keeps each principal's temporary tables its own", async () => {
    await rows(alice, "create table visits as select 1 as n; create temp table draft as select 2 as n", "shop.duckdb");
    expect(await rows(bob, "select n from visits", "shop.duckdb")).toEqual([{ n: 1 }]);
    expect(failure(await sql(bob, "select * from draft", "shop.duckdb")).error).toContain("does not exist");
    expect(await rows(alice, "select n from draft", "shop.duckdb")).toEqual([{ n: 2 }]);
  });

  it("closes only the caller's databases and connections on close_child_session", async () => {
    await rows(alice, "create table kept as select 'alice' as who");
    await rows(bob, "create table dropped as select 'bob' as who; create temp table scratch as select 1 as n", "shop.duckdb");
    await bob.callTool({ name: "close_child_session", arguments: { server_id: "duckdb" } });
    // Bob's in-memory database and his temporary tables in the file are gone; the file's own tables are not.
    expect(failure(await sql(bob, "select * from notes")).error).toContain("does not exist");
    expect(failure(await sql(bob, "select * from scratch", "shop.duckdb")).error).toContain("does not exist");
    expect(await rows(bob, "select who from dropped", "shop.duckdb")).toEqual([{ who: "bob" }]);
    // Alice's are untouched: her in-memory tables, and her temporary table in the file.
    expect(await rows(alice, "select who from kept")).toEqual([{ who: "alice" }]);
    expect(await rows(alice, "select n from draft", "shop.duckdb")).toEqual([{ n: 2 }]);
  });
});

describe("duckdb queries, queued per principal over HTTP", () => {
  let gaggle: HttpGaggle;

  beforeAll(async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-duckdb-queue-")));
    gaggle = await startHttpGaggle(config(dir, "timeout_ms = 600000\n"), { env: TOKENS });
  });
  // Stopping gaggle interrupts Alice's queries.
  afterAll(() => gaggle.stop());

  it("answers one principal while another's queries run and wait", async () => {
    const alice = await gaggle.connect({ name: "alice", ...bearer(TOKENS.GAGGLE_TEST_ALICE) });
    const bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
    const settled: number[] = [];
    // Each would run for minutes: the first runs, the others wait their turn behind it.
    for (const index of [1, 2, 3]) {
      sql(alice, "select count(*) from range(100000000000000)")
        .finally(() => settled.push(index))
        .catch(() => {}); // Ends with gaggle.
    }
    // All three reached the child before Bob asks.
    await until(
      async () => JSON.parse(textOf((await alice.callTool({ name: "get_child_status", arguments: { server_id: "duckdb" } })) as CallToolResult)),
      (status: { queue: { running: number } }) => status.queue.running === 3,
    );
    expect(await rows(bob, "select 1 as one")).toEqual([{ one: 1 }]);
    expect(settled).toEqual([]);
  });
});

describe("close_child_session on duckdb, per principal over HTTP", () => {
  let gaggle: HttpGaggle;

  beforeAll(async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-duckdb-close-")));
    gaggle = await startHttpGaggle(config(dir, "read_write = true\ntimeout_ms = 600000\n"), { env: TOKENS });
  });
  // Stopping gaggle interrupts Bob's query.
  afterAll(() => gaggle.stop());

  it("closes only the caller's connections and in-memory database", async () => {
    const alice = await gaggle.connect({ name: "alice", ...bearer(TOKENS.GAGGLE_TEST_ALICE) });
    const bob = await gaggle.connect({ name: "bob", ...bearer(TOKENS.GAGGLE_TEST_BOB) });
    const running = async () =>
      (
        JSON.parse(textOf((await alice.callTool({ name: "get_child_status", arguments: { server_id: "duckdb" } })) as CallToolResult)) as {
          queue: { running: number };
        }
      ).queue.running;
    for (const client of [alice, bob]) {
      await rows(client, "create table mine as select 1 as n");
      await rows(client, "create temp table draft as select 2 as n", "shared.duckdb");
    }
    const long = "select count(*) from range(100000000000000)";
    const aliceLong = sql(alice, long);
    let bobSettled = false;
    sql(bob, long)
      .finally(() => (bobSettled = true))
      .catch(() => {}); // Ends with gaggle.
    await until(running, (count) => count === 2);

    const closed = (await alice.callTool({ name: "close_child_session", arguments: { server_id: "duckdb" } })) as CallToolResult;
    expect(closed.isError).toBeFalsy();
    expect(failure(await aliceLong).error).toContain("the database was closed");
    expect(failure(await sql(alice, "select * from mine")).error).toContain("does not exist");
    expect(failure(await sql(alice, "select * from draft", "shared.duckdb")).error).toContain("does not exist");

    expect(await running()).toBe(1);
    expect(bobSettled).toBe(false);
    expect(await rows(bob, "select n from draft", "shared.duckdb")).toEqual([{ n: 2 }]);
  });
});
