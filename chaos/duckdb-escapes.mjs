// Attack: a read-only duckdb child asked to write, change DuckDB's state or reach outside its roots, in many
// spellings (case, quoted names, comments, nesting in subqueries, CTEs and lambdas, after a harmless statement),
// then asked for huge cells. An escape is a write attempt answered as a success, a file appearing anywhere in the
// work folder, or DuckDB's logging or profiling left on; gaggle's memory is watched while it answers the huge cells.
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CallTally, mib } from "./lib/figures.mjs";
import { startStdio, workDir } from "./lib/gaggle.mjs";
import { newMark, orphansOf, watchMemory } from "./lib/procs.mjs";

export const title = "read-only duckdb: writes, state changes and huge cells";

/** Statements and expressions that write a file or change DuckDB's state; `OUT` is a path in the work folder. */
const WRITES = [
  "copy (select 1) to 'OUT'",
  "copy (select 1) to 'OUT' (format parquet)",
  "export database 'OUT'",
  "attach 'OUT' as other",
  "install httpfs",
  "load json",
  "set threads = 1",
  "set memory_limit = '100GB'",
  "reset allowed_directories",
  "pragma enable_profiling",
  "pragma profiling_output = 'OUT'",
  "call enable_logging(storage = 'file', storage_path = 'OUT')",
  "call enable_profiling()",
  "call checkpoint()",
  "create table t as select 1",
  "create temp table t as select 1",
  "create macro m() as 1",
  "use memory",
  "checkpoint",
  "vacuum",
  "detach memory",
];
const READS_THAT_WRITE = [
  "select * from enable_logging(storage = 'file', storage_path = 'OUT')",
  "select * from enable_profiling()",
  "select * from disable_logging()",
  "select * from checkpoint()",
  "select * from force_checkpoint()",
  "select * from query('copy (select 1) to ''OUT''')",
  "select * from query_table('t')",
  "select * from json_execute_serialized_sql(json_serialize_sql('select 1'))",
  "select setseed(0.1)",
  "select write_log('x')",
  "select nextval('s')",
  "select * from read_duckdb('OUT')",
];

/** The ways one attack is spelled. */
function spellings(sql) {
  const quoted = sql.replace(/\b(enable_logging|enable_profiling|checkpoint|query|setseed|write_log|query_table)\(/g, '"$1"(');
  const forms = [sql, sql.toUpperCase(), quoted, `/* harmless */ ${sql} -- comment`, `select 1; ${sql}`, `  \n\t${sql};;`];
  if (sql.startsWith("select")) {
    forms.push(
      `select * from (${sql}) as nested`,
      `with t as (${sql}) select * from t`,
      `select list_transform([1], x -> (${sql.replace(/^select \* from /, "select count(*) from ")}))`,
      `select 1 where exists (${sql})`,
    );
  }
  return forms;
}

export async function run({ scale }) {
  const work = workDir("duckdb");
  const root = join(work.path, "root");
  mkdirSync(join(root, "data"), { recursive: true });
  writeFileSync(join(root, "data", "sales.csv"), "region,amount\nnorth,10\n");
  const config = join(work.path, "gaggle.toml");
  writeFileSync(
    config,
    [
      "[gateway]",
      'log_level = "warn"',
      "",
      "[virtual.process]",
      "enabled = false",
      "[virtual.goose]",
      "enabled = false",
      "[virtual.team]",
      "enabled = false",
    ]
      .concat(["", "[virtual.duckdb]", "enabled = true", `roots = [${JSON.stringify(root)}]`, "max_cell_bytes = 1000", "memory_limit_mb = 256", ""])
      .join("\n"),
  );
  const mark = newMark("duckdb");
  const gaggle = await startStdio({ config, mark, dir: work.path }).initialize();
  const memory = watchMemory(gaggle.pid);
  const tally = new CallTally();
  const sql = async (query) =>
    tally.record(
      await gaggle.call("execute_child_tool", { server_id: "duckdb", tool_name: "duckdb", arguments: { query } }, { timeoutMs: 60_000 }),
      query,
    );

  const escapes = [];
  const rounds = Math.max(1, Math.round(3 * scale));
  let attempts = 0;
  for (let round = 0; round < rounds; round++) {
    for (const base of [...WRITES, ...READS_THAT_WRITE]) {
      for (const target of [join(root, `out-${round}`), join(work.path, `outside-${round}`), `relative-${round}`]) {
        for (const query of spellings(base.replaceAll("OUT", target))) {
          attempts++;
          const answer = await sql(query);
          if (answer.result && !answer.result.isError) escapes.push(query);
        }
      }
    }
  }
  const written = [...readdirSync(work.path), ...readdirSync(root)].filter((name) => !["root", "gaggle.toml", "state", "data"].includes(name));
  const settings = await sql("select current_setting('logging_storage') as l, current_setting('enable_profiling') as p");
  const settingsText = settings.result?.content?.[0]?.text ?? "";
  const stateChanged = /"l":"memory"/.test(settingsText) && /"p":(null|"")/.test(settingsText) ? 0 : 1;

  // Huge cells: each answer shows 1000 bytes of a 100 MB value.
  const before = memory.peakKiB();
  const cells = Math.max(2, Math.round(10 * scale));
  for (let i = 0; i < cells; i++) await sql(`select repeat('x', 100000000) as big, ${i} as i`);
  const peakKiB = memory.stop();
  await gaggle.stop();
  const orphans = await orphansOf(mark, 2000);
  work.remove();
  return {
    title,
    tally,
    peakKiB,
    orphans: orphans.length,
    figures: [
      ["write attempts", `${attempts} (${WRITES.length + READS_THAT_WRITE.length} forms, each in several spellings and targets)`],
      ["escapes", `${escapes.length}${escapes.length > 0 ? `: ${escapes.slice(0, 3).join(" | ")}` : ""}`],
      ["files written", `${written.length}${written.length > 0 ? `: ${written.slice(0, 5).join(", ")}` : ""}`],
      ["logging or profiling on", stateChanged],
      ["100 MB cells", `${cells}; gaggle's peak went from ${mib(before)} to ${mib(peakKiB)}`],
      ...tally.figures(),
      ["orphans", orphans.length],
    ],
    mustBeZero: {
      escapes: escapes.length,
      "files written": written.length,
      "state changed": stateChanged,
      hung: tally.hung,
      orphans: orphans.length,
    },
  };
}
