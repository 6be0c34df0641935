// The exact command line gaggle gives goose: first turn, follow-ups, configured and allowed options, environment.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gaggle.js";
import { FAKE_GOOSE, failureOf, gooseConfig, startGooseGaggle, type GooseGaggle } from "./helpers.js";

let goose: GooseGaggle | undefined;
afterEach(async () => {
  await goose?.gaggle.close();
  goose = undefined;
});

describe("the argv of each turn", () => {
  it("names the session, adds --resume after the first turn, sets NO_COLOR=1 and the configured env and cwd", async () => {
    goose = await startGooseGaggle();
    const id = await goose.run("first\nline two of the same prompt");
    const session = `gosling-${id.replace(/-/g, "").slice(0, 8)}`;
    await goose.settle(id);
    await goose.text("send_prompt_to_gosling", { process_id: id, prompt: "-dash first" });
    await goose.settle(id);
    const runs = goose.runs();
    expect(runs.map((run) => run.argv)).toEqual([
      ["run", "--name", session, "--text", "first\nline two of the same prompt", "--output-format", "stream-json"],
      ["run", "--name", session, "--resume", "--text=-dash first", "--output-format", "stream-json"],
    ]);
    for (const run of runs) {
      expect(run.env.NO_COLOR).toBe("1");
      expect(run.env.GOOSE_PATH_ROOT).toBe(join(goose.dir, "goose-root"));
      expect(run.cwd).toBe(goose.dir);
    }
    // The fake continued the same session: its second answer counts two turns.
    const output = await goose.text("get_gosling_output", { process_id: id });
    expect(output).toContain(`Turn 1 of session ${session}: you said "first"`);
    expect(output).toContain(`Turn 2 of session ${session}: you said "-dash first"`);
  });

  it("adds configured args, provider, model and options, and lets a gosling's options override them", async () => {
    goose = await startGooseGaggle(
      ['provider = "anthropic"', 'model = "claude-sonnet"', 'options = ["--with-builtin", "developer", "--max-turns=5"]'].join("\n"),
    );
    await goose.settle(await goose.run("defaults"));
    await goose.settle(await goose.run("mine", ["--model", "gpt-4o", "--max-turns", "7", "--with-builtin", "memory", "--system=-be brief"]));
    const [defaults, mine] = goose.runs().map((run) => run.argv.slice(5));
    expect(defaults).toEqual([
      "--output-format",
      "stream-json",
      "--provider",
      "anthropic",
      "--model",
      "claude-sonnet",
      "--with-builtin",
      "developer",
      "--max-turns",
      "5",
    ]);
    expect(mine).toEqual([
      "--output-format",
      "stream-json",
      "--provider",
      "anthropic",
      "--with-builtin",
      "developer",
      "--model",
      "gpt-4o",
      "--max-turns",
      "7",
      "--with-builtin",
      "memory",
      "--system=-be brief",
    ]);
  });

  it('puts [virtual.goose] args before `run`, and leaves --output-format out with output_format = "text"', async () => {
    // node as the command and the fake as its argument: goose runs only if args come before `run`.
    goose = await startGooseGaggle(`command = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(FAKE_GOOSE)}]\noutput_format = "text"`);
    const id = await goose.run("plain [tool]");
    const output = await goose.settle(id).then(() => goose!.text("get_gosling_output", { process_id: id }));
    expect(goose.runs()[0]!.argv).toEqual(["run", "--name", expect.stringMatching(/^gosling-[0-9a-f]{8}$/), "--text", "plain [tool]"]);
    expect(output).toContain("─── shell | developer");
    expect(output).toMatch(/Turn 1 of session gosling-[0-9a-f]{8}: you said "plain \[tool\]"/);
    expect(output).toContain("Status: completed");
  });
});

describe("the options allowlist", () => {
  const refusals: Array<[string[], RegExp]> = [
    [["--text", "x"], /"--text" is not allowed: gaggle passes the prompt itself/],
    [["--name", "mine"], /"--name" is not allowed: gaggle names the Goose session/],
    [["--resume"], /"--resume" is not allowed/],
    [["--no-session"], /"--no-session" is not allowed/],
    [["--recipe", "r.yaml"], /"--recipe" is not allowed: it conflicts with --text/],
    [["--interactive"], /"--interactive" is not allowed/],
    [["--rm", "-rf"], /"--rm" is not allowed/],
    [["--model"], /"--model" needs a value/],
    [["--max-turns", "many"], /"--max-turns" needs a positive integer/],
    [["--provider", "a", "--provider", "b"], /"--provider" is given more than once/],
    [["gpt-4o"], /unexpected value "gpt-4o"/],
  ];

  it("refuses flags outside it, or that conflict with what gaggle sets, with INVALID_ARGS listing what is allowed", async () => {
    goose = await startGooseGaggle();
    for (const [options, message] of refusals) {
      const failure = failureOf(await goose.call("run_goose", { prompt: "x", options }));
      expect(failure.code).toBe("INVALID_ARGS");
      expect(failure.error).toMatch(message);
      expect(failure.error).toContain("Allowed options: --provider PROVIDER, --model MODEL, --with-builtin NAME[,NAME], --with-extension COMMAND");
    }
    expect(goose.runs()).toEqual([]);
    expect(await goose.text("list_goslings")).toContain("Found 0 goslings");
  });

  it("unknown arguments never reach goose: the tool's input schema is closed", async () => {
    goose = await startGooseGaggle();
    const failure = failureOf(await goose.call("run_goose", { prompt: "x", cwd: "/" }));
    expect(failure.code).toBe("INVALID_ARGS");
    expect(failure.error).toContain(`unexpected property "cwd"`);
  });

  it("makes a config with a refused option invalid, naming the key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
    const path = writeConfig(gooseConfig(dir, 'options = ["--no-session"]'));
    const result = await runCli(["validate", "--config", path]);
    expect(result.code).toBe(1);
    expect(result.stderr + result.stdout).toMatch(/virtual\.goose\.options.*"--no-session" is not allowed/s);
  });
});
