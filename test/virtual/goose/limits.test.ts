// The circuit breakers: every refusal is LIMIT_REACHED and names its limit and its [virtual.goose] setting.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { waitGone } from "../../helpers/processes.js";
import { failureOf, gooseConfig, startGooseGaggle, transcriptOf, type GooseGaggle } from "./helpers.js";

let goose: GooseGaggle | undefined;
afterEach(async () => {
  await goose?.gaggle.close();
  goose = undefined;
});

describe("limits", () => {
  it("max_active: no more working goslings than allowed, and a follow-up may not wake one past it", async () => {
    goose = await startGooseGaggle("max_active = 1");
    const idle = await goose.run("quick");
    await goose.settle(idle);
    const busy = await goose.run("[hang]");
    const refused = failureOf(await goose.call("run_goose", { prompt: "one more" }));
    expect(refused).toMatchObject({
      code: "LIMIT_REACHED",
      error: "1 gosling working at once, the most [virtual.goose] max_active allows (1)",
    });
    expect(refused.hint).toContain("raise [virtual.goose] max_active");
    const wake = failureOf(await goose.call("send_prompt_to_gosling", { process_id: idle, prompt: "wake up" }));
    expect(wake).toMatchObject({ code: "LIMIT_REACHED", error: expect.stringContaining("max_active allows (1)") });
    // The working gosling may still queue follow-ups: it is working already.
    expect(await goose.text("send_prompt_to_gosling", { process_id: busy, prompt: "later" })).toContain("queued behind 1 turn");
    expect(failureOf(await goose.call("dispatch_agent", { prompt: "x" })).error).toContain("max_active");
  });

  it("max_total: no more goslings held than allowed; releasing one makes room", async () => {
    goose = await startGooseGaggle("max_total = 2");
    const first = await goose.run("one");
    await goose.run("two");
    const refused = failureOf(await goose.call("run_goose", { prompt: "three" }));
    expect(refused).toMatchObject({
      code: "LIMIT_REACHED",
      error: "2 goslings not released at once, the most [virtual.goose] max_total allows (2)",
    });
    expect(refused.hint).toContain("release_gosling");
    await goose.text("release_gosling", { process_id: first });
    await goose.run("three");
  });

  it("max_prompts: a gosling takes no more prompts than allowed, queued ones included", async () => {
    goose = await startGooseGaggle("max_prompts = 2");
    const id = await goose.run("one [slow 500]");
    await goose.text("send_prompt_to_gosling", { process_id: id, prompt: "two" });
    const refused = failureOf(await goose.call("send_prompt_to_gosling", { process_id: id, prompt: "three" }));
    expect(refused).toMatchObject({
      code: "LIMIT_REACHED",
      error: `gosling ${id} has had 2 prompts, the most max_prompts allows ([virtual.goose] max_prompts = 2)`,
    });
    await goose.settle(id);
    expect(goose.runs()).toHaveLength(2);
  });

  it("max_runtime_minutes: a turn that runs past it is stopped, and the gosling takes no more prompts", async () => {
    goose = await startGooseGaggle("max_runtime_minutes = 0.01");
    const id = await goose.run("[hang] [ignore-term]");
    const status = await goose.settle(id);
    expect(status).toContain("Status: error");
    expect(await waitGone(goose.pids())).toEqual([]);
    const lines = transcriptOf(await goose.text("get_gosling_output", { process_id: id }));
    expect(lines).toContain("Working on it, for ever.");
    expect(lines).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\[error\] stopped after \d+\.\ds of work: the gosling reached max_runtime_minutes$/)]),
    );
    const refused = failureOf(await goose.call("send_prompt_to_gosling", { process_id: id, prompt: "more" }));
    expect(refused).toMatchObject({
      code: "LIMIT_REACHED",
      error: expect.stringMatching(/has worked \d+\.\ds, the most max_runtime_minutes allows \(\[virtual\.goose\] max_runtime_minutes = 0\.01\)/),
    });
  });

  it("idle_release_minutes: an idle gosling is released, and its transcript stays", async () => {
    goose = await startGooseGaggle("idle_release_minutes = 0.005");
    const id = await goose.run("[answer before the nap]");
    const status = await until(
      () => goose!.text("get_gosling_status", { process_id: id }),
      (text) => text.includes("RELEASED"),
    );
    expect(status).toContain("Activity: RELEASED (idle for 0.3s (idle_release_minutes = 0.005))");
    const output = await goose.text("get_gosling_output", { process_id: id });
    expect(output).toContain("before the nap");
    expect(failureOf(await goose.call("send_prompt_to_gosling", { process_id: id, prompt: "x" })).error).toContain("was released (idle for");
  });

  it("limit settings are checked with the config", async () => {
    const path = writeConfig(
      gooseConfig(mkdtempSync(join(tmpdir(), "gaggle-goose-")), 'max_active = 0\nmax_runtime_minutes = -1\noutput_format = "xml"\nmax_activ = 3'),
    );
    const result = await runCli(["validate", "--config", path]);
    expect(result.code).toBe(1);
    const text = result.stderr + result.stdout;
    expect(text).toMatch(/virtual\.goose\.max_active.*expected an integer >= 1/);
    expect(text).toMatch(/virtual\.goose\.max_runtime_minutes.*expected a number of minutes > 0/);
    expect(text).toMatch(/virtual\.goose\.output_format.*"stream-json", "text"/);
    expect(text).toMatch(/virtual\.goose\.max_activ.*did you mean "max_active"/);
  });
});
