// dispatch_agent: a one-off agent run to its end, answering with its final message, within a timeout.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { waitGone } from "../../helpers/processes.js";
import { failureOf, startGooseGaggle, type GooseGaggle } from "./helpers.js";

let goose: GooseGaggle | undefined;
afterEach(async () => {
  await goose?.gaggle.close();
  goose = undefined;
});

function texts(result: CallToolResult): string[] {
  return result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`));
}

describe("dispatch_agent", () => {
  it("returns the agent's final answer, then releases it with its transcript kept", async () => {
    goose = await startGooseGaggle();
    const result = await goose.call("dispatch_agent", { prompt: "What is it? [tool] [answer It is 42.]" });
    expect(result.isError).toBeFalsy();
    const [answer, note] = texts(result);
    expect(answer).toBe("It is 42.");
    const id = /gosling ([0-9a-f-]{36})/.exec(note!)![1]!;
    expect(note).toMatch(/, \d+\.\ds, 100 tokens; get_gosling_output with process_id=/);
    const [run] = goose.runs();
    expect(run!.argv).toEqual([
      "run",
      "--name",
      `gosling-${id.replace(/-/g, "").slice(0, 8)}`,
      "--text",
      "What is it? [tool] [answer It is 42.]",
      "--output-format",
      "stream-json",
    ]);
    const output = await goose.text("get_gosling_output", { process_id: id });
    expect(output).toContain("Session: gosling-");
    expect(output).toContain("(dispatch_agent)");
    expect(output).toContain("Status: released");
    expect(output).toContain('[tool] developer__shell {"command":"ls -la"}');
  });

  it("joins a streamed answer, and runs in `path` when given", async () => {
    goose = await startGooseGaggle();
    mkdirSync(join(goose.dir, "sub"));
    const result = await goose.call("dispatch_agent", { prompt: "[stream] [answer done]", path: "sub" });
    expect(texts(result)[0]).toBe("Hello, streamed\nworld. done");
    expect(goose.runs()[0]!.cwd).toBe(join(goose.dir, "sub"));
    const missing = failureOf(await goose.call("dispatch_agent", { prompt: "x", path: "nowhere" }));
    expect(missing).toMatchObject({ code: "INVALID_ARGS", error: `path "nowhere" is not a directory (resolved to ${join(goose.dir, "nowhere")})` });
  });

  it("times out after dispatch_timeout_minutes, stopping the agent", async () => {
    goose = await startGooseGaggle("dispatch_timeout_minutes = 0.01");
    const failure = failureOf(await goose.call("dispatch_agent", { prompt: "[hang] [grandchild] [ignore-term]" }));
    expect(failure).toMatchObject({
      code: "TIMEOUT",
      error: "dispatch_agent timed out after 0.6s (dispatch_timeout_minutes = 0.01); the agent was stopped",
    });
    expect(failure.hint).toContain("raise [virtual.goose] dispatch_timeout_minutes");
    expect(await waitGone(goose.pids())).toEqual([]);
    expect(await goose.text("list_goslings", { status: "released" })).toContain("Found 1 gosling");
  });

  it("fails with the reason when the agent fails", async () => {
    goose = await startGooseGaggle();
    const failure = failureOf(await goose.call("dispatch_agent", { prompt: "[crash]" }));
    expect(failure).toMatchObject({
      code: "SERVER_FAILED",
      error: expect.stringMatching(/^the dispatched agent failed after \d+\.\ds: goose exited with code 101$/),
    });
  });

  it("reports progress while it waits", async () => {
    goose = await startGooseGaggle();
    const progress: Progress[] = [];
    const result = await goose.gaggle.client.callTool(
      {
        name: "execute_child_tool",
        arguments: { server_id: "goose", tool_name: "dispatch_agent", arguments: { prompt: "[notify] [slow 2200] [answer slow but sure]" } },
      },
      CallToolResultSchema,
      { onprogress: (update) => progress.push(update) },
    );
    expect(texts(result as CallToolResult)[0]).toBe("slow but sure");
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]!.message).toBe("[log developer] working slowly");
  });
});
