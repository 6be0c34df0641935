// Goslings over `goose acp`: where the installed Goose lists `acp` (the fake with FAKE_GOOSE_ACP=1, its acp being the
// fake ACP agent), a gosling's turns are prompts to one Goose process of its own; where it does not, or
// [virtual.goose] transport = "run" says so, or an option has no ACP form, each turn is a `goose run`.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { isAlive, waitGone } from "../../helpers/processes.js";
import { gooseConfig, idOf, readRuns, type FakeRun } from "./helpers.js";

interface AcpGaggle {
  gaggle: RunningGaggle;
  runs(): FakeRun[];
  text(tool: string, args: Record<string, unknown>): Promise<string>;
  run(prompt: string, options?: string[]): Promise<string>;
  /** Waits until prompt `number` of the gosling has ended; returns its whole output. */
  settled(id: string, number: number): Promise<string>;
}

async function start(goose: string, env: Record<string, string>): Promise<AcpGaggle> {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-acp-"));
  const gaggle = await startGaggle(gooseConfig(dir, goose), { env: { XDG_STATE_HOME: join(dir, "xdg-state"), ...env } });
  const text = async (tool: string, args: Record<string, unknown>) =>
    textOf(await gaggle.meta("execute_child_tool", { server_id: "goose", tool_name: tool, arguments: args }));
  return {
    gaggle,
    runs: () => readRuns(join(dir, "argv.jsonl")),
    text,
    run: async (prompt, options) => idOf(await text("run_goose", options ? { prompt, options } : { prompt })),
    settled: (id, number) =>
      until(
        () => text("get_gosling_output", { process_id: id, full_output: true }),
        (output) => new RegExp(`<<< \\[prompt ${number}\\] (completed|error|cancelled)`).test(output),
        15_000,
      ),
  };
}

/** The pid the fake ACP agent names in its answer to `whoami`, per turn. */
function whoami(output: string): Array<{ pid: number; turn: number }> {
  return [...output.matchAll(/pid (\d+) turn (\d+) session/g)].map((match) => ({ pid: Number(match[1]), turn: Number(match[2]) }));
}

describe("a Goose with goose acp", () => {
  let goose: AcpGaggle;

  beforeAll(async () => {
    goose = await start('provider = "prov-a"\nmodel = "model-a"', { FAKE_GOOSE_ACP: "1" });
  });
  afterAll(() => goose?.gaggle.close());

  it("runs every turn of a gosling on one goose acp process, provider and model in its environment", async () => {
    const id = await goose.run("whoami\nsay first");
    await goose.settled(id, 1);
    expect(await goose.text("send_prompt_to_gosling", { process_id: id, prompt: "whoami\nsay second" })).toContain(id);
    const output = await goose.settled(id, 2);
    expect(output).toMatch(/^Runs over: goose acp \(ACP session fake-\d+-\d+\)$/m);
    expect(output).toContain("<<< [prompt 1] completed");
    expect(output).toContain("<<< [prompt 2] completed");
    expect(output).toContain("first");
    expect(output).toContain("second");
    const turns = whoami(output);
    expect(turns.map((turn) => turn.turn)).toEqual([1, 2]);
    expect(new Set(turns.map((turn) => turn.pid)).size).toBe(1);
    const runs = goose.runs();
    expect(runs.map((run) => run.argv)).toEqual([["acp"]]);
    expect(runs[0]!.pid).toBe(turns[0]!.pid);
    expect(runs[0]!.env).toMatchObject({ GOOSE_PROVIDER: "prov-a", GOOSE_MODEL: "model-a" });
    expect(isAlive(runs[0]!.pid)).toBe(true);
    await goose.text("release_gosling", { process_id: id });
    expect(await waitGone([runs[0]!.pid])).toEqual([]);
  });

  it("gives --with-builtin to goose acp and a gosling's own --model to its environment", async () => {
    const before = goose.runs().length;
    const id = await goose.run("say built", ["--with-builtin", "developer", "--model", "model-b"]);
    expect(await goose.settled(id, 1)).toContain("<<< [prompt 1] completed");
    const run = goose.runs()[before]!;
    expect(run.argv).toEqual(["acp", "--with-builtin", "developer"]);
    expect(run.env).toMatchObject({ GOOSE_PROVIDER: "prov-a", GOOSE_MODEL: "model-b" });
    await goose.text("release_gosling", { process_id: id });
    expect(await waitGone([run.pid])).toEqual([]);
  });

  it("runs a gosling with an option goose acp cannot take over goose run", async () => {
    const before = goose.runs().length;
    const id = await goose.run("[answer plain]", ["--max-turns", "3"]);
    expect(await goose.settled(id, 1)).toContain("plain");
    expect(
      goose
        .runs()
        .slice(before)
        .map((run) => run.argv[0]),
    ).toEqual(["run"]);
  });

  it("leaves no goose acp process after shutdown", async () => {
    const id = await goose.run("say still here");
    await goose.settled(id, 1);
    const acpPids = goose
      .runs()
      .filter((run) => run.argv[0] === "acp")
      .map((run) => run.pid);
    expect(acpPids.filter(isAlive)).toHaveLength(1);
    await goose.gaggle.close();
    expect(await waitGone(acpPids)).toEqual([]);
  });
});

describe("a goose acp process", () => {
  it("does not outlive gaggle killed with SIGKILL", async () => {
    const goose = await start("", { FAKE_GOOSE_ACP: "1" });
    const id = await goose.run("say still here");
    await goose.settled(id, 1);
    const acpPids = goose
      .runs()
      .filter((run) => run.argv[0] === "acp")
      .map((run) => run.pid);
    expect(acpPids.filter(isAlive)).toHaveLength(1);
    process.kill(goose.gaggle.pid, "SIGKILL");
    expect(await waitGone(acpPids)).toEqual([]);
  });
});

describe("a goose acp process that never answers initialize", () => {
  it("is stopped when its gosling is released, release_gosling not waiting for the answer", async () => {
    const goose = await start("", { FAKE_GOOSE_ACP: "1", FAKE_ACP_MUTE: "1" });
    try {
      const id = await goose.run("say never");
      const [acp] = await until(
        () => goose.runs().filter((run) => run.argv[0] === "acp"),
        (runs) => runs.length === 1,
      );
      expect(await goose.text("release_gosling", { process_id: id })).toContain(id);
      expect(await waitGone([acp!.pid])).toEqual([]);
    } finally {
      await goose.gaggle.close();
    }
  });
});

describe("goose run, the way without goose acp", () => {
  it("is taken when the installed Goose has no acp: one goose run per turn", async () => {
    const goose = await start("", {});
    try {
      const id = await goose.run("[answer one]");
      await goose.settled(id, 1);
      await goose.text("send_prompt_to_gosling", { process_id: id, prompt: "[answer two]" });
      const output = await goose.settled(id, 2);
      expect(output).toContain("Runs over: goose run\n");
      expect(output).toContain("one");
      expect(output).toContain("two");
      expect(goose.runs().map((run) => run.argv.slice(0, 2))).toEqual([
        ["run", "--name"],
        ["run", "--name"],
      ]);
    } finally {
      await goose.gaggle.close();
    }
  });

  it('is taken when [virtual.goose] transport = "run", whatever Goose has', async () => {
    const goose = await start('transport = "run"', { FAKE_GOOSE_ACP: "1" });
    try {
      const id = await goose.run("[answer forced]");
      expect(await goose.settled(id, 1)).toContain("forced");
      expect(goose.runs().map((run) => run.argv[0])).toEqual(["run"]);
    } finally {
      await goose.gaggle.close();
    }
  });
});
