// Follow-ups sent while a turn runs wait their turn: queued, run in order, and status says so.
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../../helpers/poll.js";
import { startGooseGaggle, transcriptOf, type GooseGaggle } from "./helpers.js";

let goose: GooseGaggle | undefined;
afterEach(async () => {
  await goose?.gaggle.close();
  goose = undefined;
});

describe("follow-ups during a running turn", () => {
  it("are queued, reported as queued, and run one after another in the order sent", async () => {
    goose = await startGooseGaggle();
    const id = await goose.run("first [slow 3000]");
    const second = await goose.text("send_prompt_to_gosling", { process_id: id, prompt: "second" });
    const third = await goose.text("send_prompt_to_gosling", { process_id: id, prompt: "third\nstill the third prompt" });
    expect(second).toContain(`Sent prompt #2 to gosling ${id}. It is queued behind 1 turn and runs when that one ends.`);
    expect(third).toContain("Sent prompt #3");
    expect(third).toContain("It is queued behind 2 turns and runs when they end.");

    const status = await goose.text("get_gosling_status", { process_id: id });
    expect(status).toMatch(/Activity: WORKING for \d+\.\ds on prompt 1 \(2 queued\)/);
    expect(status).toContain("Prompts: 3 of max 10, 2 queued");
    expect(await goose.text("list_goslings", { status: "running" })).toContain("Status: running (2 queued)");
    const header = await goose.text("get_gosling_output", { process_id: id });
    expect(header).toMatch(/1\. \[.+\] "first \[slow 3000\]" \(running\)/);
    expect(header).toMatch(/2\. \[.+\] "second" \(queued\)/);
    expect(header).toMatch(/3\. \[.+\] "third still the third prompt" \(queued\)/);

    await goose.settle(id);
    expect(goose.runs().map((run) => run.argv[run.argv.indexOf("--text") + 1])).toEqual([
      "first [slow 3000]",
      "second",
      "third\nstill the third prompt",
    ]);
    expect(goose.runs().map((run) => run.argv.includes("--resume"))).toEqual([false, true, true]);
    const lines = transcriptOf(await goose.text("get_gosling_output", { process_id: id, full_output: true }));
    const answers = lines.filter((line) => line.startsWith("Turn "));
    expect(answers).toEqual([
      expect.stringContaining("Turn 1 of session gosling-"),
      expect.stringContaining("Turn 2 of session gosling-"),
      expect.stringContaining("Turn 3 of session gosling-"),
    ]);
    expect(answers[2]).toContain('you said "third"');
    // Each turn begins after the one before it ended.
    const marks = lines.filter((line) => /^(>>>|<<<) \[prompt \d\] [^>]/.test(line)).map((line) => line.slice(0, 14));
    expect(marks).toEqual([">>> [prompt 1]", "<<< [prompt 1]", ">>> [prompt 2]", "<<< [prompt 2]", ">>> [prompt 3]", "<<< [prompt 3]"]);
    expect(await goose.text("get_gosling_status", { process_id: id })).toContain("Tokens: 300");
  });

  it("a follow-up to an idle gosling runs at once", async () => {
    goose = await startGooseGaggle();
    const id = await goose.run("hello");
    await goose.settle(id);
    const sent = await goose.text("send_prompt_to_gosling", { process_id: id, prompt: "again" });
    expect(sent).toContain("It is running now.");
    await until(
      () => goose!.runs().length,
      (count) => count === 2,
    );
    await goose.settle(id);
    expect(await goose.text("get_gosling_status", { process_id: id })).toMatch(/Activity: IDLE for/);
  });

  it("finds a gosling by the start of its id or its session name, and says when none matches", async () => {
    goose = await startGooseGaggle();
    const id = await goose.run("hello");
    await goose.settle(id);
    const session = `gosling-${id.replace(/-/g, "").slice(0, 8)}`;
    expect(await goose.text("get_gosling_status", { process_id: id.slice(0, 8) })).toContain(`ID: ${id}`);
    expect(await goose.text("get_gosling_status", { process_id: session })).toContain(`ID: ${id}`);
    const missing = await goose.call("send_prompt_to_gosling", { process_id: "no-such-gosling", prompt: "x" });
    expect(missing.isError).toBe(true);
    expect(JSON.parse((missing.content[0] as { text: string }).text)).toMatchObject({
      code: "NOT_FOUND",
      hint: "list_goslings shows every gosling's id",
    });
  });
});
