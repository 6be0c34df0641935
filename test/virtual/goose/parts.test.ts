// The goose child's pure parts on their own: options allowlist, argv, transcript, stream-json reading, settings.
import { describe, expect, it } from "vitest";
import { sessionName, turnArgv } from "../../../src/virtual/goose/argv.js";
import { listsAcp } from "../../../src/virtual/goose/acp-probe.js";
import { mergeOptions, OptionError, optionTokens, parseRunOptions } from "../../../src/config/virtual/goose-options.js";
import { gooseSettings } from "../../../src/config/virtual/goose.js";
import { StreamJsonReader, TextReader } from "../../../src/virtual/goose/stream-json.js";
import { Transcript } from "../../../src/virtual/goose/transcript.js";

describe("options", () => {
  it("normalises allowed flags, joined or separate, and keeps values starting with - joined", () => {
    const parsed = parseRunOptions(["--model=gpt-4o", "--with-builtin", "developer,memory", "--no-profile", "--system=-terse", "--max-turns", "3"]);
    expect(optionTokens(parsed)).toEqual([
      "--model",
      "gpt-4o",
      "--with-builtin",
      "developer,memory",
      "--no-profile",
      "--system=-terse",
      "--max-turns",
      "3",
    ]);
  });

  it("refuses with the reason and the list of what is allowed", () => {
    expect(() => parseRunOptions(["-t", "hi"])).toThrow(
      new OptionError(
        'option "-t" is not allowed: gaggle passes the prompt itself with --text. Allowed options: --provider PROVIDER, --model MODEL, --with-builtin NAME[,NAME], --with-extension COMMAND, --with-streamable-http-extension URL, --max-turns N, --max-tool-repetitions N, --system TEXT, --no-profile, --debug',
      ),
    );
    expect(() => parseRunOptions(["--output-format", "json"])).toThrow(/set by \[virtual\.goose\] output_format/);
    expect(() => parseRunOptions(["--debug=yes"])).toThrow(/"--debug" takes no value/);
    expect(() => parseRunOptions(["--max-turns", "0"])).toThrow(/positive integer, got "0"/);
    expect(() => parseRunOptions(["--model", "--debug"])).toThrow(/"--model" needs a value \(MODEL\)/);
    // Names every object has are not flags either.
    expect(() => parseRunOptions(["constructor"])).toThrow(/^unexpected value "constructor": options are flags/);
    expect(() => parseRunOptions(["--toString"])).toThrow(/^option "--toString" is not allowed\. Allowed options:/);
  });

  it("lets a gosling's flags replace configured ones, except flags that may repeat", () => {
    const merged = mergeOptions(
      parseRunOptions(["--model", "a", "--with-builtin", "developer"]),
      parseRunOptions(["--model", "b", "--with-builtin", "memory"]),
    );
    expect(optionTokens(merged)).toEqual(["--with-builtin", "developer", "--model", "b", "--with-builtin", "memory"]);
  });
});

describe("turnArgv", () => {
  const base = {
    prefixArgs: [],
    session: "gosling-0123abcd",
    prompt: "hi",
    outputFormat: "stream-json" as const,
    provider: undefined,
    model: undefined,
    options: [],
  };

  it("builds the first turn, later turns, and text mode", () => {
    expect(turnArgv({ ...base, resume: false })).toEqual(["run", "--name", "gosling-0123abcd", "--text", "hi", "--output-format", "stream-json"]);
    expect(turnArgv({ ...base, resume: true, prefixArgs: ["x"] })).toEqual([
      "x",
      "run",
      "--name",
      "gosling-0123abcd",
      "--resume",
      "--text",
      "hi",
      "--output-format",
      "stream-json",
    ]);
    expect(turnArgv({ ...base, resume: false, outputFormat: "text", provider: "p", model: "m" })).toEqual([
      "run",
      "--name",
      "gosling-0123abcd",
      "--text",
      "hi",
      "--provider",
      "p",
      "--model",
      "m",
    ]);
    expect(turnArgv({ ...base, resume: false, provider: "p", options: parseRunOptions(["--provider", "q"]) }).slice(-2)).toEqual(["--provider", "q"]);
  });

  it("names the session after the first 8 hex digits of the id", () => {
    expect(sessionName("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")).toBe("gosling-0f1e2d3c");
  });
});

describe("Transcript", () => {
  it("numbers lines from the start and keeps them under the byte cap, oldest dropped first", () => {
    const transcript = new Transcript(40);
    for (let i = 0; i < 10; i++) transcript.line(`line ${i} ..`);
    expect(transcript.total).toBe(10);
    expect(transcript.size).toBeLessThanOrEqual(40);
    // 10 bytes a line with its newline: the last 4 fit.
    expect(transcript.firstKept).toBe(6);
    expect(transcript.page(0, 2)).toEqual({ lines: ["line 6 ..", "line 7 .."], start: 6, end: 8, total: 10, firstKept: 6 });
    expect(transcript.page(9, 5).lines).toEqual(["line 9 .."]);
    expect(transcript.droppedBytesCount).toBe(60);
  });

  it("streams text into the open line and cuts a line longer than the cap", () => {
    const transcript = new Transcript(100);
    transcript.stream("Hel");
    transcript.stream("lo\nwor");
    transcript.stream("ld");
    transcript.line("[tool] x");
    transcript.stream("next");
    expect(transcript.page(0, 10).lines).toEqual(["Hello", "world", "[tool] x", "next"]);
    transcript.line("z".repeat(500));
    const last = transcript.tail(1)[0]!;
    expect(last).toMatch(/^z+ …\[line cut: over max_output_bytes\]$/);
    expect(Buffer.byteLength(last)).toBeLessThan(100);
  });
});

describe("StreamJsonReader", () => {
  const event = (value: unknown) => JSON.stringify(value);
  const msg = (role: string, content: unknown[], id: string | null = null) =>
    event({ type: "message", message: { id, role, created: 1, content, metadata: {} } });

  it("renders every kind of event and content item, and keeps the facts of the turn", () => {
    const transcript = new Transcript(10_000);
    const reader = new StreamJsonReader(transcript);
    for (const line of [
      msg("assistant", [
        { type: "text", text: "Plan:\n1. look" },
        { type: "toolRequest", id: "a", toolCall: { status: "error", error: "-32602: bad args" } },
      ]),
      msg("user", [{ type: "toolResponse", id: "a", toolResult: { status: "success", value: [{ type: "text", text: "legacy array" }] } }]),
      msg("user", [
        { type: "toolResponse", id: "b", toolResult: { status: "success", value: { content: [{ type: "text", text: "boom" }], isError: true } } },
      ]),
      msg("assistant", [{ type: "redactedThinking", data: "x" }, { type: "image", data: "..", mimeType: "image/png" }, { type: "frobnicate" }]),
      msg("assistant", [{ type: "actionRequired", data: { actionType: "toolConfirmation", id: "c", toolName: "developer__shell", arguments: {} } }]),
      event({ type: "notification", extension_id: "ext", progress: { progress: 3, total: null, message: null } }),
      event({ type: "error", error: "rate limited" }),
      event({ type: "surprise", detail: 1 }),
      "[1, 2]",
      msg("assistant", [{ type: "text", text: "Final " }], "m1"),
      msg("assistant", [{ type: "text", text: "answer." }], "m1"),
      event({ type: "complete", total_tokens: null }),
    ])
      reader.read(line);
    const facts = reader.finish();
    expect(transcript.page(0, 100).lines).toEqual([
      "Plan:",
      "1. look",
      "[tool error] invalid call: -32602: bad args",
      "[tool result] legacy array",
      "[tool error] boom",
      "[thinking] (redacted)",
      "[image image/png]",
      "[frobnicate]",
      "[action required] toolConfirmation developer__shell",
      "[progress ext] 3",
      "[error] rate limited",
      '[surprise] {"type":"surprise","detail":1}',
      "[1, 2]",
      "Final answer.",
    ]);
    expect(facts).toEqual({ complete: true, tokens: null, errors: ["rate limited"], events: 11, answer: "Final answer." });
  });

  it("in text mode keeps lines without ANSI codes and answers with all of them", () => {
    const transcript = new Transcript(1000);
    const reader = new TextReader(transcript);
    reader.read("\u001b[1mbold\u001b[0m text");
    reader.read("second");
    expect(transcript.page(0, 5).lines).toEqual(["bold text", "second"]);
    expect(reader.finish()).toMatchObject({ complete: true, answer: "bold text\nsecond" });
  });
});

describe("[virtual.goose] settings", () => {
  it("has the documented defaults", () => {
    expect(gooseSettings.table.parse({})).toEqual({
      enabled: true,
      required: false,
      // Unset: it follows gateway.expose.
      expose: undefined,
      command: "goose",
      args: [],
      env: {},
      cwd: undefined,
      provider: undefined,
      model: undefined,
      options: [],
      outputFormat: "stream-json",
      transport: "auto",
      maxActive: 5,
      maxTotal: 20,
      maxRuntimeMinutes: 30,
      maxOutputBytes: 1_048_576,
      maxPrompts: 10,
      idleReleaseMinutes: 10,
      dispatchTimeoutMinutes: 10,
    });
  });

  it("checks configured options with the same allowlist", () => {
    const result = gooseSettings.table.safeParse({ options: ["--resume"] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({ path: ["options"], message: expect.stringContaining('option "--resume" is not allowed') });
  });
});

describe("the probe of goose acp", () => {
  const help = (commands: string) => `An AI agent\n\nUsage: goose [COMMAND]\n\nCommands:\n${commands}\n\nOptions:\n  -h, --help  Print help\n`;

  it("finds acp in the command list of goose --help", () => {
    expect(
      listsAcp(help("  configure  Configure goose settings\n  acp        Run goose as an ACP agent server on stdio\n  run        Run goose")),
    ).toBe(true);
  });

  it("finds no acp in a list without it, outside the list, or in no help at all", () => {
    expect(listsAcp(help("  configure  Configure goose settings\n  run        Run goose; acp is not here"))).toBe(false);
    expect(listsAcp("acp\nCommands:\n  run  Run goose\n\n  acp  not a command: after the list")).toBe(false);
    expect(listsAcp("")).toBe(false);
  });
});
