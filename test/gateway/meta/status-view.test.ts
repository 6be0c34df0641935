// get_child_status's stderr tail: bounded in lines and in characters, saying what it left out.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATUS_STDERR_CHARS, stderrView } from "../../../src/gateway/meta/status-view.js";
import { startGaggle, type RunningGaggle } from "../../helpers/gaggle.js";
import { fixture, NO_BUILT_INS } from "../../helpers/paths.js";

describe("stderrView", () => {
  it("shows a short tail as it is", () => {
    expect(stderrView([])).toEqual([]);
    expect(stderrView(["a", "b"])).toEqual(["a", "b"]);
  });

  it("shows the newest 20 lines, after a line counting the earlier ones", () => {
    const lines = Array.from({ length: 25 }, (_, i) => `line ${i + 1}`);
    const view = stderrView(lines);
    expect(view[0]).toBe("[... 5 earlier lines (30 characters) not shown ...]");
    expect(view.slice(1)).toEqual(lines.slice(5));
  });

  it("keeps the newest whole lines within 2000 characters", () => {
    const lines = Array.from({ length: 10 }, (_, i) => `${i}`.repeat(300));
    const view = stderrView(lines);
    expect(view).toEqual(["[... 4 earlier lines (1200 characters) not shown ...]", ...lines.slice(4)]);
    expect(view.slice(1).join("").length).toBeLessThanOrEqual(STATUS_STDERR_CHARS);
  });

  it("cuts a newest line longer than the bound by itself, keeping its start", () => {
    const long = `{"level":"debug",${"x".repeat(5000)}}`;
    const view = stderrView(["before", long]);
    expect(view).toEqual([
      "[... 1 earlier line (6 characters) not shown ...]",
      `${long.slice(0, STATUS_STDERR_CHARS)} [... ${long.length - STATUS_STDERR_CHARS} more characters]`,
    ]);
  });
});

describe("get_child_status of a chatty child", () => {
  let gaggle: RunningGaggle;
  // 30 lines of debug JSON, some 330 characters each, then the echo fixture, which says it is ready.
  const chatty = [
    "i=0",
    'while [ $i -lt 30 ]; do printf \'{"level":"debug","seq":%d,"msg":"%0300d"}\\n\' $i 0 >&2; i=$((i+1)); done',
    `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(fixture("echo.mjs"))}`,
  ].join("\n");

  beforeAll(async () => {
    gaggle = await startGaggle(`${NO_BUILT_INS}\n[mcp_servers.chatty]\ncommand = "/bin/sh"\nargs = ["-c", ${JSON.stringify(chatty)}]\n`);
  });
  afterAll(() => gaggle.close());

  it("returns at most 2000 characters of stderr, the newest lines whole, with a note of what it left out", async () => {
    await gaggle.meta("execute_child_tool", { server_id: "chatty", tool_name: "echo", arguments: { text: "hi" } });
    const stderrNow = async () => (await gaggle.metaJson<{ stderr: string[] }>("get_child_status", { server_id: "chatty" })).stderr;
    await expect.poll(stderrNow, { timeout: 5000 }).toContain("call echo");
    const { stderr } = await gaggle.metaJson<{ stderr: string[] }>("get_child_status", { server_id: "chatty" });
    expect(stderr.at(-1)).toBe("call echo");
    expect(stderr.at(-2)).toBe("echo fixture ready");
    expect(stderr[0]).toMatch(/^\[\.\.\. \d+ earlier lines \(\d+ characters\) not shown \.\.\.\]$/);
    const shown = stderr.slice(1);
    expect(shown.join("").length).toBeLessThanOrEqual(STATUS_STDERR_CHARS);
    expect(shown.filter((line) => line.startsWith('{"level":"debug"')).length).toBeGreaterThanOrEqual(4);
    for (const line of shown.slice(0, -2)) expect(line).toMatch(/^\{"level":"debug","seq":\d+,"msg":"0{300}"\}$/);
    expect(JSON.stringify(stderr).length).toBeLessThan(2500);
  });
});
