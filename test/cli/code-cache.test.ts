// gaggle's executable keeps V8's compiled form of its one-file build, and starts from it the next time.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { startGaggle, textOf } from "../helpers/gaggle.js";

const CACHE_FILE = /^[0-9a-f]{16}-node[\d.]+-[a-z0-9]+-[a-z0-9]+\.bin$/;

function cacheRun(env: Record<string, string>) {
  const home = mkdtempSync(join(tmpdir(), "gaggle-code-cache-"));
  // Empty is as unset (the default place), and overrides the test run's shared cache where the env is merged.
  const runEnv = { ...process.env, HOME: home, XDG_STATE_HOME: join(home, "state"), GAGGLE_CODE_CACHE: "", ...env } as Record<string, string>;
  const run = (args: string[]) => runCli(args, { env: runEnv });
  return { home, run, env: runEnv };
}

function onlyFile(dir: string): string {
  const names = readdirSync(dir);
  expect(names).toHaveLength(1);
  expect(names[0]).toMatch(CACHE_FILE);
  return join(dir, names[0]!);
}

describe("the code cache", () => {
  it("is written by the first start into the state dir, and used, not written again, by the next", async () => {
    const { home, run } = cacheRun({});
    expect((await run(["--version"])).code).toBe(0);
    const file = onlyFile(join(home, "state", "gaggle", "code-cache"));
    expect(statSync(file).size).toBeGreaterThan(100_000);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = statSync(file).mtimeMs;

    const again = await run(["--version"]);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(statSync(file).mtimeMs).toBe(written);
  });

  it("runs, from the cache, what is loaded only when used (DuckDB, a native module)", async () => {
    const { home, run } = cacheRun({});
    const config = join(home, "children_config.toml");
    writeFileSync(config, "[virtual.duckdb]\nenabled = true\n[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n");
    const query = ["call", "duckdb", "duckdb", '{"query": "select 42 as n"}', "--config", config];
    for (const attempt of ["compiled", "from the cache"]) {
      const out = await run(query);
      expect({ attempt, code: out.code, stderr: out.stderr }).toEqual({ attempt, code: 0, stderr: "" });
      expect(JSON.parse(out.stdout)).toMatchObject({ rows: [{ n: 42 }] });
    }
    onlyFile(join(home, "state", "gaggle", "code-cache"));
  });

  it("that is damaged costs nothing but the compile: gaggle runs, and the cache is written anew", async () => {
    const { home, run } = cacheRun({});
    await run(["--version"]);
    const file = onlyFile(join(home, "state", "gaggle", "code-cache"));
    writeFileSync(file, Buffer.alloc(statSync(file).size, 7));

    const again = await run(["--help"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("Usage:");
    expect(readFileSync(file).equals(Buffer.alloc(statSync(file).size, 7))).toBe(false);
  });

  it("keeps the caches of a few other builds, the newest, and none unused for a week", async () => {
    const { home, run } = cacheRun({});
    const dir = join(home, "state", "gaggle", "code-cache");
    mkdirSync(dir, { recursive: true });
    const now = Date.now() / 1000;
    const day = 24 * 3600;
    // Other builds' caches, newest first: written an hour, a day, two, three and four days ago, and eight days ago.
    const others = [1 / 24, 1, 2, 3, 4, 8].map((daysAgo, rank) => {
      const name = `${"0".repeat(15)}${rank}-node20.0.0-linux-x64.bin`;
      writeFileSync(join(dir, name), "old");
      utimesSync(join(dir, name), now - daysAgo * day, now - daysAgo * day);
      return name;
    });

    expect((await run(["--version"])).code).toBe(0);
    const left = readdirSync(dir);
    const own = left.filter((name) => !others.includes(name));
    expect(own).toHaveLength(1);
    expect(own[0]).toMatch(CACHE_FILE);
    expect(left.filter((name) => others.includes(name)).sort()).toEqual(others.slice(0, 3).sort());
  });

  it("leaves alone the caches other gaggles are still writing, and removes those their writers left a week ago", async () => {
    const { home, run } = cacheRun({});
    const dir = join(home, "state", "gaggle", "code-cache");
    mkdirSync(dir, { recursive: true });
    const now = Date.now() / 1000;
    // Four other gaggles writing their builds' caches at once: more than the three other builds' caches kept.
    const writing = [1, 2, 3, 4].map((pid) => `${"0".repeat(15)}${pid}-node20.0.0-linux-x64.bin.${pid}.tmp`);
    for (const name of writing) writeFileSync(join(dir, name), "part");
    const abandoned = `${"0".repeat(16)}-node20.0.0-linux-x64.bin.5.tmp`;
    writeFileSync(join(dir, abandoned), "part");
    utimesSync(join(dir, abandoned), now - 8 * 24 * 3600, now - 8 * 24 * 3600);

    expect((await run(["--version"])).code).toBe(0);
    const left = readdirSync(dir);
    expect(left.filter((name) => name.endsWith(".tmp")).sort()).toEqual(writing.sort());
    expect(left.filter((name) => !name.endsWith(".tmp"))).toHaveLength(1);
  });

  it("goes where GAGGLE_CODE_CACHE says, and nowhere when it says off", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "gaggle-code-cache-dir-"));
    const placed = cacheRun({ GAGGLE_CODE_CACHE: elsewhere });
    expect((await placed.run(["--version"])).code).toBe(0);
    onlyFile(elsewhere);
    expect(existsSync(join(placed.home, "state", "gaggle", "code-cache"))).toBe(false);

    const off = cacheRun({ GAGGLE_CODE_CACHE: "off" });
    expect((await off.run(["--version"])).code).toBe(0);
    expect(existsSync(join(off.home, "state", "gaggle", "code-cache"))).toBe(false);
  });

  it("leaves a start from it able to read command lines with the shell grammar (a process policy)", async () => {
    const { home, run, env } = cacheRun({});
    expect((await run(["--version"])).code).toBe(0);
    onlyFile(join(home, "state", "gaggle", "code-cache"));
    const gaggle = await startGaggle(`[virtual.process.policy]\nallow = ["echo *"]\n`, { env });
    try {
      const call = (command: string) =>
        gaggle.meta("execute_child_tool", { server_id: "process", tool_name: "gg_process_run", arguments: { command } });
      const ran = await call("echo hi");
      expect(ran.isError, textOf(ran)).toBeFalsy();
      const refused = await call("echo hi > /tmp/gaggle-code-cache-escape");
      expect(JSON.parse(textOf(refused))).toMatchObject({ code: "PERMISSION_DENIED" });
    } finally {
      await gaggle.close();
    }
  });
});
