// The fake goose keeps the real CLI's contract: flags and conflicts, exit codes, named sessions and --resume.
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FAKE_GOOSE, readRuns } from "./helpers.js";

function goose(root: string, ...args: string[]) {
  const result = spawnSync(FAKE_GOOSE, args, {
    encoding: "utf8",
    env: { ...process.env, GOOSE_PATH_ROOT: root, FAKE_GOOSE_ARGV_LOG: join(root, "argv.jsonl") },
  });
  return {
    code: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    events: result.stdout
      .trim()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe("the fake goose", () => {
  it("continues a named session with --resume, and fails on an unknown name with exit code 1", () => {
    const root = mkdtempSync(join(tmpdir(), "fake-goose-"));
    const first = goose(root, "run", "--name", "s", "--text", "one", "--output-format", "stream-json");
    expect(first.code).toBe(0);
    expect(first.events.at(-1)).toEqual({ type: "complete", total_tokens: 100 });
    const second = goose(root, "run", "-n", "s", "-r", "-t", "two", "--output-format=stream-json");
    expect(second.events[0]).toMatchObject({
      type: "message",
      message: { role: "assistant", content: [{ type: "text", text: 'Turn 2 of session s: you said "two"' }] },
    });
    expect(second.events.at(-1)).toEqual({ type: "complete", total_tokens: 200 });
    const unknown = goose(root, "run", "--name", "nobody", "--resume", "--text", "x");
    expect(unknown).toMatchObject({ code: 1, stderr: "Error: No session found with name 'nobody'\n" });
    // Without --resume a name starts a new session, as in Goose.
    expect(goose(root, "run", "--name", "s", "--text", "fresh", "--output-format", "stream-json").events[0]).toMatchObject({
      message: { content: [{ text: 'Turn 1 of session s: you said "fresh"' }] },
    });
    expect(readRuns(join(root, "argv.jsonl")).map((run) => run.argv[0])).toEqual(["run", "run", "run", "run"]);
  });

  it("refuses bad use as clap does (exit 2, `error:`), and missing input as Goose does (exit 1, `Error:`)", () => {
    const root = mkdtempSync(join(tmpdir(), "fake-goose-"));
    const cases: Array<[string[], number, string]> = [
      [["run", "--text", "a", "--instructions", "f"], 2, "error: the argument '--instructions <FILE>' cannot be used with '--text <TEXT>'"],
      [["run", "--name", "a", "--no-session", "--text", "x"], 2, "error: the argument '--no-session' cannot be used with '--name <NAME>'"],
      [["run", "--text", "a", "--text", "b"], 2, "error: the argument '--text <TEXT>' cannot be used multiple times"],
      [["run", "--text", "a", "--output-format", "xml"], 2, "error: invalid value 'xml' for '--output-format <FORMAT>'"],
      [["run", "--text", "a", "--max-turns", "lots"], 2, "error: invalid value 'lots' for '--max-turns <NUMBER>': invalid digit found in string"],
      [["run", "--text"], 2, "error: a value is required for '--text <TEXT>' but none was supplied"],
      [["run", "--frobnicate"], 2, "error: unexpected argument '--frobnicate' found"],
      [["run"], 1, "Error: Must provide either --instructions (-i), --text (-t), or --recipe. Use -i - for stdin."],
      [["run", "--text", "a", "--session-id", "20250101_1"], 1, "Error: --session-id can only be used with --resume flag"],
      [["run", "--resume", "--text", "a"], 1, "Error: No session found to resume"],
    ];
    for (const [args, code, message] of cases) {
      const result = goose(root, ...args);
      expect({ args, code: result.code }).toEqual({ args, code });
      expect(result.stderr.split("\n")[0]).toBe(message.split("\n")[0]);
    }
  });
});
