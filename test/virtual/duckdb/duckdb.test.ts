// The built-in duckdb child through a real gaggle: SQL over files under its roots on embedded DuckDB, read-only
// unless read_write, every answer capped, a query past its time interrupted.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";

const ONLY_DUCKDB = "[virtual.process]\nenabled = false\n[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n";

function workspace() {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-duckdb-")));
  mkdirSync(join(dir, "data"));
  writeFileSync(join(dir, "data", "sales.csv"), "region,amount\nnorth,10\nsouth,20\nnorth,5\n");
  writeFileSync(join(dir, "data", "more.csv"), "region,amount\neast,7\n");
  return dir;
}

async function duckdbGaggle(dir: string, settings = "") {
  const gaggle = await startGaggle(`${ONLY_DUCKDB}\n[virtual.duckdb]\nenabled = true\nroots = [${JSON.stringify(dir)}]\n${settings}`);
  const sql = (query: string, database?: string) =>
    gaggle.meta("execute_child_tool", { server_id: "duckdb", tool_name: "duckdb", arguments: { query, ...(database && { database }) } });
  const rows = async (query: string, database?: string) => JSON.parse(textOf(await sql(query, database))) as Answer;
  return { gaggle, sql, rows };
}

interface Answer {
  columns: Array<{ name: string; type: string }>;
  rows: Array<Record<string, unknown>>;
  row_count: number;
  truncated?: boolean;
  note?: string;
  cells_cut?: number;
  note_cells?: string;
}

describe("the duckdb child, read-only", () => {
  let dir: string;
  let db: Awaited<ReturnType<typeof duckdbGaggle>>;
  let gaggle: RunningGaggle;
  beforeAll(async () => {
    dir = workspace();
    db = await duckdbGaggle(dir, "max_rows = 3\nmax_bytes = 1024\ntimeout_ms = 500\n");
    gaggle = db.gaggle;
  });
  afterAll(() => gaggle.close());

  it("answers with the columns and their types, and the rows as JSON", async () => {
    expect(await db.rows("select 42 as n, 'x' as s, [1, 2] as l, 12345678901234567890::hugeint as h")).toEqual({
      columns: [
        { name: "n", type: "INTEGER" },
        { name: "s", type: "VARCHAR" },
        { name: "l", type: "INTEGER[]" },
        { name: "h", type: "HUGEINT" },
      ],
      rows: [{ n: 42, s: "x", l: [1, 2], h: "12345678901234567890" }],
      row_count: 1,
    });
  });

  it("reads files under its roots in place, globs and aggregates included", async () => {
    const answer = await db.rows(`select region, sum(amount) as total from '${dir}/data/*.csv' group by region order by region`);
    expect(answer.rows).toEqual([
      { region: "east", total: "7" },
      { region: "north", total: "15" },
      { region: "south", total: "20" },
    ]);
  });

  it("reads a relative path in a query from the first root, however the query names the file", async () => {
    const sales = [{ region: "north" }, { region: "south" }, { region: "north" }];
    for (const query of [
      "select region from 'data/sales.csv'",
      'select region from "data/sales.csv"',
      "select region from read_csv('data/sales.csv')",
      "select region from read_csv(['data/sales.csv'], header = true)",
      "select region from read_csv('./data/../data/sales.csv') where 'data/sales.csv' <> ''",
    ]) {
      expect((await db.rows(query)).rows, query).toEqual(sales);
    }
    expect((await db.rows("select count(*) as n from glob('data/*.csv')")).rows).toEqual([{ n: "2" }]);
    // Column names are those of the query as written.
    expect((await db.rows("select upper(region) from 'data/sales.csv' limit 1")).columns).toEqual([{ name: "upper(region)", type: "VARCHAR" }]);
  });

  it("names its roots when it refuses a path outside them, relative or not", async () => {
    expect(failureOf(await db.sql("select * from '../elsewhere.csv'"))).toMatchObject({
      code: "PERMISSION_DENIED",
      error: expect.stringContaining(`Cannot access file "${join(dir, "..", "elsewhere.csv")}"`),
      hint: `queries reach only files under the roots (${dir}; [virtual.duckdb] roots): name a file under them, absolute ('${dir}/FILE.csv') or, in a query, relative to the first root ('FILE.csv')`,
    });
  });

  it("reaches no file outside its roots, and its confinement cannot be lifted", async () => {
    expect(failureOf(await db.sql("select * from read_csv('/etc/passwd')"))).toMatchObject({
      code: "PERMISSION_DENIED",
      error: expect.stringContaining('Cannot access file "/etc/passwd"'),
      hint: expect.stringContaining(`queries reach only files under the roots (${dir}; [virtual.duckdb] roots)`),
    });
    expect(failureOf(await db.sql("set enable_external_access = true"))).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(failureOf(await db.sql(`select * from read_csv('${dir}/../../../../../etc/passwd')`))).toMatchObject({ code: "PERMISSION_DENIED" });
  });

  it("runs only queries: no CREATE, COPY ... TO, EXPORT, ATTACH, INSTALL, LOAD, SET, PRAGMA or CALL", async () => {
    for (const query of [
      "create table t (a int)",
      `copy (select 1) to '${dir}/out.csv'`,
      `export database '${dir}/exported'`,
      `attach '${dir}/other.duckdb'`,
      "install httpfs",
      "load json",
      "set threads = 1",
      "pragma enable_profiling",
      `call enable_logging(storage = 'file', storage_path = '${dir}/logs')`,
    ]) {
      const refused = failureOf(await db.sql(query));
      expect(refused.code).toBe("PERMISSION_DENIED");
      expect(refused.error).toBe(
        "it is not a query; a read-only duckdb child runs only queries (SELECT, FROM, WITH, VALUES, DESCRIBE, SHOW, SUMMARIZE)",
      );
      expect(refused.hint).toContain("read_write = true");
    }
    expect(failureOf(await db.sql(`select 1; copy (select 2) to '${dir}/two.csv'`)).error).toMatch(/^one of its 2 statements is not a query; /);
    // Nothing was written, not even by preparing a statement to learn its type.
    expect(readdirSync(dir)).toEqual(["data"]);
  });

  it("calls only built-in functions that read: no logging, profiling, SQL given as text or seeding", async () => {
    for (const [query, name] of [
      [`select * from enable_logging(storage = 'file', storage_path = '${dir}/logs')`, "table function enable_logging"],
      [`select 1 where exists (from enable_profiling())`, "table function enable_profiling"],
      [`from query('select 1')`, "table function query"],
      [`select * from range(3), lateral (select * from checkpoint())`, "table function checkpoint"],
      ["select setseed(0.5)", "function setseed"],
      ["select list_transform([1], x -> write_log('x'))", "function write_log"],
      ["select main.my_macro(1)", "function main.my_macro"],
    ] as const) {
      const refused = failureOf(await db.sql(query));
      expect(refused.code).toBe("PERMISSION_DENIED");
      expect(refused.error).toMatch(new RegExp(`^statement 1 calls the ${name}, which a read-only duckdb child does not run`));
    }
    expect(readdirSync(dir)).toEqual(["data"]);
    expect((await db.rows("select current_setting('logging_storage') as storage")).rows).toEqual([{ storage: "memory" }]);
  });

  it("runs every kind of query: DESCRIBE, SUMMARIZE, SHOW, window functions, lambdas and file readers", async () => {
    const csv = `'${dir}/data/sales.csv'`;
    for (const query of [
      `describe select * from ${csv}`,
      `summarize select * from ${csv}`,
      "show databases",
      `select region, row_number() over (order by amount) as n from read_csv(${csv})`,
      "select list_transform([1, 2], x -> x * 2) as doubled, random() < 2 as r, uuid() is not null as u",
      `with t as (from ${csv}) select count(*) from t`,
      "select * from duckdb_settings() where name = 'threads'",
      "pivot (values ('a', 1), ('b', 2)) t(k, v) on k in ('a', 'b') using sum(v)",
    ]) {
      const answer = JSON.parse(textOf(await db.sql(query))) as Answer & { error?: string };
      expect(answer.error, query).toBeUndefined();
      expect(answer.row_count, query).toBeGreaterThan(0);
    }
  });

  it("cuts an answer at max_rows and at max_bytes, saying so", async () => {
    const many = await db.rows("select * from range(10)");
    expect(many.rows).toHaveLength(3);
    expect(many).toMatchObject({ truncated: true, note: expect.stringContaining("only the first 3 rows are shown ([virtual.duckdb] max_rows)") });
    const wide = await db.rows("select repeat('x', 600) as text from range(3)");
    expect(wide.rows).toHaveLength(1);
    expect(wide.note).toContain("rows past 1024 characters ([virtual.duckdb] max_bytes) were left out after 1");
  });

  it("interrupts a query past timeout_ms, and the next query runs", async () => {
    expect(failureOf(await db.sql("select count(*) from range(100000000000000)"))).toMatchObject({
      code: "TIMEOUT",
      error: "the query was interrupted after 500 ms ([virtual.duckdb] timeout_ms)",
    });
    expect((await db.rows("select 1 as one")).rows).toEqual([{ one: 1 }]);
  });

  it("says what is wrong with bad SQL, and refuses bad arguments before they reach DuckDB", async () => {
    expect(failureOf(await db.sql("selec 1"))).toMatchObject({
      code: "EXECUTION_ERROR",
      error: expect.stringContaining('syntax error at or near "selec"'),
    });
    const bad = failureOf(await gaggle.meta("execute_child_tool", { server_id: "duckdb", tool_name: "duckdb", arguments: { query: 5 } }));
    expect(bad.code).toBe("INVALID_ARGS");
  });

  it("opens a database file under its roots read-only, and none outside them or that does not exist", async () => {
    expect(failureOf(await db.sql("select 1", "/tmp/elsewhere.duckdb"))).toMatchObject({
      code: "PERMISSION_DENIED",
      error: `database "/tmp/elsewhere.duckdb" is outside the roots (${dir})`,
    });
    expect(failureOf(await db.sql("select 1", "missing.duckdb"))).toMatchObject({
      code: "NOT_FOUND",
      error: `database file ${join(dir, "missing.duckdb")} does not exist, and a read-only duckdb child creates none`,
    });
  });
});

describe("the duckdb child's relative paths", () => {
  it("reads them from the first root, not from the config file's folder nor gaggle's working directory", async () => {
    const dir = workspace();
    const gaggle = await startGaggle(`${ONLY_DUCKDB}\n[virtual.duckdb]\nenabled = true\nroots = ["${dir}/data", "${dir}"]\n`);
    try {
      const sql = (query: string) => gaggle.meta("execute_child_tool", { server_id: "duckdb", tool_name: "duckdb", arguments: { query } });
      expect(JSON.parse(textOf(await sql("select sum(amount) as total from 'sales.csv'"))).rows).toEqual([{ total: "35" }]);
      expect(JSON.parse(textOf(await sql("select count(*) as n from '../data/more.csv'"))).rows).toEqual([{ n: "1" }]);
      expect(failureOf(await sql("select * from 'data/sales.csv'"))).toMatchObject({
        code: "EXECUTION_ERROR",
        error: expect.stringContaining(`${dir}/data/data/sales.csv`),
      });
    } finally {
      await gaggle.close();
    }
  });
});

describe("the duckdb child's database files", () => {
  it("says a data file or a folder given as a database is not one, and how to query it, read-only or not", async () => {
    const dir = workspace();
    for (const settings of ["", "read_write = true\n"]) {
      const db = await duckdbGaggle(dir, settings);
      try {
        expect(failureOf(await db.sql("select 1", "data/sales.csv"))).toMatchObject({
          code: "INVALID_ARGS",
          error: `database "data/sales.csv" (${dir}/data/sales.csv) is not a DuckDB database file`,
          hint: `\`database\` opens files DuckDB made; query a data file in place instead, as SELECT * FROM '${dir}/data/sales.csv', and leave \`database\` out`,
        });
        expect(failureOf(await db.sql("select 1", "data"))).toMatchObject({
          code: "INVALID_ARGS",
          error: `database "data" (${dir}/data) is a folder, not a DuckDB database file`,
        });
        writeFileSync(join(dir, "broken.duckdb"), "x".repeat(4096));
        expect(failureOf(await db.sql("select 1", "broken.duckdb"))).toMatchObject({ code: "INVALID_ARGS" });
      } finally {
        await db.gaggle.close();
      }
    }
  });

  it("says a database file another process holds for writing is in use", async () => {
    const dir = workspace();
    const file = join(dir, "held.duckdb");
    // Another process creates the file and holds DuckDB's lock on it until it is killed.
    const script = `require(${JSON.stringify(createRequire(import.meta.url).resolve("@duckdb/node-api"))}).DuckDBInstance.create(${JSON.stringify(file)}).then(() => console.log("held"))`;
    const holder = spawn(process.execPath, ["-e", `${script}; setInterval(() => {}, 1000)`], { stdio: ["ignore", "pipe", "inherit"] });
    const db = await duckdbGaggle(dir);
    try {
      await once(holder.stdout!, "data");
      expect(failureOf(await db.sql("select 1", "held.duckdb"))).toMatchObject({
        code: "EXECUTION_ERROR",
        error: expect.stringMatching(new RegExp(`^database "held.duckdb" \\(${file}\\) is in use: IO Error: Could not set lock on file`)),
        hint: expect.stringContaining("another process holds it open for writing"),
      });
    } finally {
      const exited = once(holder, "exit");
      holder.kill("SIGKILL");
      await exited;
      await db.gaggle.close();
    }
  });
});

describe("the duckdb child with read_write", () => {
  it("creates a database file, keeps what it wrote between calls and sessions, and answers queries at once", async () => {
    const dir = workspace();
    const writer = await duckdbGaggle(dir, "read_write = true\n");
    try {
      await writer.rows(`create table visits as select * from '${dir}/data/sales.csv'`, "shop.duckdb");
      await writer.rows("insert into visits values ('west', 1)", "shop.duckdb");
      const [a, b] = await Promise.all([
        writer.rows("select count(*) as n from visits", "shop.duckdb"),
        writer.rows("select max(amount) as top from visits", "shop.duckdb"),
      ]);
      expect([a.rows, b.rows]).toEqual([[{ n: "4" }], [{ top: "20" }]]);
    } finally {
      await writer.gaggle.close();
    }
    // A read-only child opens what the other wrote, and reads it.
    const reader = await duckdbGaggle(dir);
    try {
      expect((await reader.rows("select region from visits order by amount limit 1", "shop.duckdb")).rows).toEqual([{ region: "west" }]);
      expect(failureOf(await reader.sql("delete from visits", "shop.duckdb")).code).toBe("PERMISSION_DENIED");
    } finally {
      await reader.gaggle.close();
    }
  });
});

/** The most memory gaggle's process has held so far (VmHWM), in megabytes. */
function peakMb(pid: number): number {
  const line = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(line![1]) / 1024;
}

describe("the duckdb child's memory", () => {
  let db: Awaited<ReturnType<typeof duckdbGaggle>>;
  beforeAll(async () => {
    db = await duckdbGaggle(workspace(), "max_cell_bytes = 64\nmemory_limit_mb = 256\n");
  });
  afterAll(() => db.gaggle.close());

  it("runs DuckDB within memory_limit_mb, spilling nothing to disk", async () => {
    expect((await db.rows("select current_setting('memory_limit') as m, current_setting('temp_directory') as t")).rows).toEqual([
      { m: "244.1 MiB", t: "" },
    ]);
  });

  it("says a query needs more memory than memory_limit_mb, or a value larger than DuckDB holds, as LIMIT_REACHED", async () => {
    expect(failureOf(await db.sql("select string_agg(repeat('x', 1000000)) from range(400)"))).toMatchObject({
      code: "LIMIT_REACHED",
      error: expect.stringMatching(/^Out of Memory Error: failed to allocate data of size .* used\)$/),
      hint: expect.stringContaining("raise [virtual.duckdb] memory_limit_mb"),
    });
    expect(failureOf(await db.sql("select repeat('x', 5000000000)"))).toMatchObject({
      code: "LIMIT_REACHED",
      error: expect.stringContaining("the maximum supported string size is"),
    });
  });

  it("cuts text and blob cells at max_cell_bytes, on a character's boundary, and says so", async () => {
    const answer = await db.rows(
      "select repeat('x', 1000) as long, 'é' || repeat('€', 30) as wide, encode(repeat('b', 100)) as bytes, 'short' as short, null as nothing",
    );
    expect(answer.rows).toEqual([{ long: "x".repeat(64), wide: `é${"€".repeat(20)}`, bytes: "b".repeat(64), short: "short", nothing: null }]);
    expect(answer).toMatchObject({
      cells_cut: 3,
      note_cells: expect.stringContaining("longer than 64 bytes ([virtual.duckdb] max_cell_bytes) were cut to it"),
    });
    expect((await db.rows("select 'short' as s")).cells_cut).toBeUndefined();
  });

  it("reads no more of a 100 MB cell than it shows, and keeps none of it once answered", async () => {
    await db.rows("select 1"); // DuckDB loaded and the database open.
    const before = peakMb(db.gaggle.pid);
    for (const round of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const answer = await db.rows(`select repeat('x', 100000000) as big, ${round} as round`);
      expect(answer.rows).toEqual([{ big: "x".repeat(64), round }]);
    }
    // DuckDB's own copies of one value are the most the cells may cost together: none of their forms in
    // JavaScript, and nothing left of an answered query.
    expect(peakMb(db.gaggle.pid) - before).toBeLessThan(700);
  });
});
