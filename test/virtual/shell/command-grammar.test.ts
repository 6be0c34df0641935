// Reading a command line with bash's grammar: what it runs and which files it opens, checked against what bash
// itself runs for a generated corpus of lines, escapes and redirections included (the oracle chaos/ uses, bounded).
import { describe, expect, it } from "vitest";
import { everyCommand, readCommandLine, type CommandLine } from "../../../src/virtual/shell/command-grammar.js";
import { bashOracle, seeded } from "../../helpers/chaos.js";

const texts = (line: CommandLine) => ("unverifiable" in line ? line : line.commands.map((command) => command.text));

describe("readCommandLine", () => {
  it("lists the simple commands of lists, pipelines and background jobs, quotes and escapes kept", async () => {
    expect(texts(await readCommandLine("npm ci && npm test || echo failed; git status | head -3\nls &  pwd |& cat"))).toEqual([
      "npm ci",
      "npm test",
      "echo failed",
      "git status",
      "head -3",
      "ls",
      "pwd",
      "cat",
    ]);
    expect(texts(await readCommandLine(`echo 'a; b' "c && d" e\\;f`))).toEqual([`echo 'a; b' "c && d" e\\;f`]);
    expect(texts(await readCommandLine("npm \\\n  test # a comment"))).toEqual(["npm test"]);
    expect(texts(await readCommandLine("FOO=1 make"))).toEqual(["FOO=1 make"]);
  });

  it("sees the command an escaped redirection character hides: \\>& and \\>| end the command before them", async () => {
    for (const attack of ["echo \\>&touch X", "echo \\>|touch X", "echo \\<&touch X", "echo a\\>&touch X"]) {
      const line = await readCommandLine(attack);
      expect("commands" in line && line.commands.map((command) => command.name)).toEqual(["echo", "touch"]);
    }
  });

  it("gives each redirection's file, words after it to the command, and no file for a copied descriptor", async () => {
    expect(await readCommandLine("make 2>&1 >> '../build log' <&3")).toEqual({
      commands: [{ text: "make", name: "make" }],
      redirects: [{ op: ">>", path: "../build log" }],
    });
    expect(await readCommandLine("> out npm test --flag 2>/dev/null")).toEqual({
      commands: [{ text: "npm test --flag", name: "npm" }],
      redirects: [
        { op: ">", path: "out" },
        { op: ">", path: "/dev/null" },
      ],
    });
    expect(await readCommandLine("npm test > out --script-shell=x")).toMatchObject({ commands: [{ text: "npm test --script-shell=x" }] });
  });

  it("names what runs commands it cannot list beforehand", async () => {
    const cases: Array<[string, string]> = [
      ["echo $(id)", "command substitution ($( ) or backticks)"],
      ['echo "$(id)"', "command substitution ($( ) or backticks)"],
      ["echo `id`", "command substitution ($( ) or backticks)"],
      ["echo ${x:-$(id)}", "command substitution ($( ) or backticks)"],
      ["cat <<EOF\n$(id)\nEOF", "command substitution ($( ) or backticks)"],
      ["(cd x && rm y)", "a subshell (( ))"],
      ["diff <(ls a) <(ls b)", "process substitution (<( ) or >( ))"],
      ["{ ls; }", "a command group ({ })"],
      ["f() { ls; }", "a function definition"],
      ["for f in *; do rm $f; done", "a loop"],
      ["if true; then ls; fi", "an if statement"],
      ["export PATH=/tmp", "a declaration (export, declare, local, readonly, typeset)"],
      ["$CMD x", "a command name that is expanded when it runs ($CMD)"],
      ["/usr/bin/c?rl x", "a command name that is expanded when it runs (/usr/bin/c?rl)"],
      ['echo > "$HOME/x"', 'a redirection to a path that is expanded when it runs ("$HOME/x")'],
      ["echo 'open", 'a syntax error near "\'open"'],
    ];
    for (const [command, construct] of cases) expect({ command, ...(await readCommandLine(command)) }).toEqual({ command, unverifiable: construct });
    // Quoted, they are only text.
    expect(texts(await readCommandLine("echo '$(id) `id` (x)'"))).toEqual(["echo '$(id) `id` (x)'"]);
  });

  it("keeps within bounds: a line too long, or nested too deep, is refused and never overflows the stack", async () => {
    expect(await readCommandLine(`echo ${"a".repeat(100_001)}`)).toEqual({ unverifiable: "a command line over 100000 characters" });
    expect(await readCommandLine(`${"$(".repeat(20_000)}id${")".repeat(20_000)}`)).toHaveProperty("unverifiable");
    expect(texts(await readCommandLine(Array.from({ length: 20_000 }, () => "a").join(" | ")))).toHaveLength(20_000);
  });
});

describe("a generated corpus, checked against bash", () => {
  it("never misses a command bash runs or a file a redirection creates", async () => {
    const oracle = bashOracle.bashOracle();
    const random = seeded(20261124);
    let verifiable = 0;
    const CASES = 400;
    try {
      for (let i = 0; i < CASES; i++) {
        const command = bashOracle.corpusLine(random, bashOracle.VOCABULARY.test);
        const line = await readCommandLine(command);
        if ("unverifiable" in line) continue; // refused, so never run: always safe
        verifiable++;
        expect({ command, missed: oracle.misses(command, line) }).toEqual({ command, missed: [] });
      }
    } finally {
      oracle.remove();
    }
    // Most lines are read, so the check above is not vacuous.
    expect(verifiable).toBeGreaterThan(CASES / 2);
  });

  it("lists every command anywhere with everyCommand: in substitutions, subshells, functions and loops, names as bash reads them", async () => {
    const read = await everyCommand('f() { a 1; }; x=$(b "2 3"); (c) | d `e` <(g) && for i in 1; do h; done; export Y=$(i); $J k');
    expect("commands" in read && read.commands.map((words) => words.map((word) => word.value ?? `<${word.text}>`))).toEqual([
      ["a", "1"],
      ["b", "2 3"],
      ["c"],
      ["d"],
      ["e"],
      ["g"],
      ["h"],
      ["i"],
      ["<$J>", "k"],
    ]);
  });
});
