// What goose printed, as get_gosling_output shows it: rendering, pagination, tokens, and the byte cap.
import { afterEach, describe, expect, it } from "vitest";
import { readJsonResource } from "../../helpers/gaggle.js";
import { startGooseGaggle, transcriptOf, type GooseGaggle } from "./helpers.js";

let goose: GooseGaggle | undefined;
afterEach(async () => {
  await goose?.gaggle.close();
  goose = undefined;
});

describe("the transcript", () => {
  it("renders Goose's stream-json events: text as is, one line per tool call and result, notices, errors marked", async () => {
    goose = await startGooseGaggle();
    const id = await goose.run("check [model] [notify] [garbage] [think] [compact] [tool] [stream] [answer All done.]");
    await goose.settle(id);
    const output = await goose.text("get_gosling_output", { process_id: id });
    expect(transcriptOf(output)).toEqual([
      expect.stringMatching(/^>>> \[prompt 1\] \d{4}-\d\d-\d\dT/),
      ">>> check [model] [notify] [garbage] [think] [compact] [tool] [stream] [answer All done.]",
      "[model] fake-model-2 (lead)",
      "[log developer] indexing the repository",
      "[progress developer] 1/2 half way",
      "this line is not JSON",
      "[thinking] Pondering the request in two lines",
      "[notice] Exceeded auto-compact threshold of 80%. Performing auto-compaction...",
      "[status] goose is compacting the conversation...",
      "Let me look.",
      '[tool] developer__shell {"command":"ls -la"}',
      "[tool result] file-a file-b file-c (3 lines)",
      "Hello, streamed",
      "world. All done.",
      expect.stringMatching(/^<<< \[prompt 1\] completed after \d+\.\ds · 100 tokens$/),
    ]);
    expect(output).toContain("Status: completed");
    expect(output).toContain("Tokens: 100");
  });

  it("marks failed tool calls, agent errors and crashes, with goose's stderr", async () => {
    goose = await startGooseGaggle();
    const tool = await goose.run("[toolerror] [fail]");
    const crash = await goose.run("[crash]");
    await goose.settle(tool);
    await goose.settle(crash);
    const toolLines = transcriptOf(await goose.text("get_gosling_output", { process_id: tool }));
    expect(toolLines).toContain("[tool error] -32603: command failed: ls: cannot access");
    expect(toolLines).toContain("[error] Request failed: fake provider answered 401 Unauthorized");
    expect(toolLines).toContain("[error] Goose reported an error: Request failed: fake provider answered 401 Unauthorized");
    const crashOutput = await goose.text("get_gosling_output", { process_id: crash });
    expect(crashOutput).toContain("Status: error");
    expect(transcriptOf(crashOutput)).toEqual(
      expect.arrayContaining([
        "Starting, then crashing.",
        "[stderr] thread 'main' panicked at crates/goose/src/agents/agent.rs:42:9:",
        "[stderr] fake goose crashed on purpose",
        "[error] goose exited with code 101",
        expect.stringMatching(/^<<< \[prompt 1\] error after/),
      ]),
    );
    const list = await goose.text("list_goslings", { status: "error" });
    expect(list).toContain('Found 2 goslings with status "error".');
    expect(list).toContain("Status summary: 0 running, 0 completed, 2 error, 0 released");
  });

  it("pages by lines: offset and limit, the Output line, and the next offset", async () => {
    goose = await startGooseGaggle();
    const id = await goose.run("[huge 250]");
    await goose.settle(id);
    // 2 prompt lines, 250 lines of text, the answer, 1 end line.
    const first = await goose.text("get_gosling_output", { process_id: id });
    expect(first).toContain("=== Output (1-100 of 254 lines) ===");
    expect(transcriptOf(first)).toHaveLength(100);
    expect(first).toContain("Next page: offset=100 limit=100");
    const middle = await goose.text("get_gosling_output", { process_id: id, offset: 100, limit: 50 });
    expect(middle).toContain("=== Output (101-150 of 254 lines) ===");
    expect(transcriptOf(middle)[0]).toMatch(/^huge line 99 of 250 x+$/);
    expect(middle).toContain("Next page: offset=150 limit=50");
    const last = await goose.text("get_gosling_output", { process_id: id, offset: 200 });
    expect(last).toContain("=== Output (201-254 of 254 lines) ===");
    expect(last).not.toContain("=== Pagination ===");
    const full = await goose.text("get_gosling_output", { process_id: id, full_output: true, limit: 5 });
    expect(full).toContain("=== Output (1-254 of 254 lines) ===");
    const beyond = await goose.text("get_gosling_output", { process_id: id, offset: 999 });
    expect(beyond).toContain("=== Output (none of 254 lines at offset 999) ===");
  });

  it("keeps at most max_output_bytes, dropping the oldest lines, and says so in the header", async () => {
    goose = await startGooseGaggle("max_output_bytes = 4096");
    const id = await goose.run("[huge 400]");
    await goose.settle(id);
    const output = await goose.text("get_gosling_output", { process_id: id, full_output: true });
    const dropped = /Dropped: the oldest (\d+) lines \(([\d.]+ KB)\), to keep the transcript under max_output_bytes = 4096/.exec(output);
    expect(dropped).not.toBeNull();
    const lines = transcriptOf(output);
    expect(lines.join("\n").length).toBeLessThanOrEqual(4096);
    expect(lines.at(-1)).toMatch(/^<<< \[prompt 1\] completed/);
    expect(output).toContain(`=== Output (${Number(dropped![1]) + 1}-404 of 404 lines) ===`);
    const fromZero = await goose.text("get_gosling_output", { process_id: id, limit: 3 });
    expect(fromZero).toContain(`(lines before offset ${dropped![1]} were dropped under max_output_bytes; showing from there)`);
  });

  it("cuts a single runaway line instead of holding it whole", async () => {
    goose = await startGooseGaggle("max_output_bytes = 65536");
    const id = await goose.run("[hugeline 500000]");
    await goose.settle(id);
    const output = await goose.text("get_gosling_output", { process_id: id, full_output: true });
    expect(output.length).toBeLessThan(70_000);
    expect(output).toContain("…[line cut at 32768 characters]");
    // The cut line is kept as text; the complete event on the next line still ends the turn.
    expect(output).toContain("Status: completed");
  });

  it("is readable as resources: the list, one gosling, and its output", async () => {
    goose = await startGooseGaggle();
    const id = await goose.run("[answer resource check]");
    await goose.settle(id);
    const list = await readJsonResource<Array<{ id: string; status: string; tokens: number }>>(goose.gaggle.client, "goslings://list");
    expect(list).toEqual([expect.objectContaining({ id, status: "completed", tokens: 100 })]);
    const one = await readJsonResource<{ prompts: Array<{ text: string; state: string }> }>(goose.gaggle.client, `goslings://${id}`);
    expect(one.prompts).toEqual([expect.objectContaining({ text: "[answer resource check]", state: "completed" })]);
    const { contents } = await goose.gaggle.client.readResource({ uri: `goslings://${id}/output` });
    expect(contents[0]).toMatchObject({ mimeType: "text/plain", text: expect.stringContaining("resource check") });
    const schema = await goose.gaggle.metaJson<{ resources: Array<{ uri: string }> }>("get_schema", { server_id: "goose" });
    expect(schema.resources.map((resource) => resource.uri)).toEqual(["goslings://list", `goslings://${id}`, `goslings://${id}/output`]);
  });
});
