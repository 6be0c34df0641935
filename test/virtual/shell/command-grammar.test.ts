// Reading a command line with bash's grammar: what it runs and which files it opens, checked against what bash
// itself runs for a generated corpus of lines, escapes and redirections included (the oracle chaos/ uses, bounded).
import { describe, expect, it } from "vitest";
import { readCommandLine, type CommandLine } from "../../../src/virtual/shell/command-grammar.js";
import { everyCommand } from "../../../src/virtual/shell/every-command.js";
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

  it("says what joins each command to the one before, as bash groups the line", async () => {
    const line = await readCommandLine("a && ! b || c | d |& e; ! f & g\nh && i > out | j");
    expect("commands" in line && line.commands.map(({ name, joint, negated }) => ({ name, joint, negated }))).toEqual([
      { name: "a", joint: undefined, negated: undefined },
      { name: "b", joint: "&&", negated: true },
      { name: "c", joint: "||", negated: undefined },
      { name: "d", joint: "|", negated: undefined },
      { name: "e", joint: "|", negated: undefined },
      { name: "f", joint: undefined, negated: true },
      { name: "g", joint: undefined, negated: undefined },
      { name: "h", joint: undefined, negated: undefined },
      { name: "i", joint: "&&", negated: undefined },
      { name: "j", joint: "|", negated: undefined },
    ]);
  });

  it("sees the command an escaped redirection character hides: \\>& and \\>| end the command before them", async () => {
    for (const attack of ["echo \\>&touch X", "echo \\>|touch X", "echo \\<&touch X", "echo a\\>&touch X"]) {
      const line = await readCommandLine(attack);
      expect("commands" in line && line.commands.map((command) => command.name)).toEqual(["echo", "touch"]);
    }
  });

  it("gives each redirection's file, words after it to the command, and no file for a copied descriptor", async () => {
    expect(await readCommandLine("make 2>&1 >> '../build log' <&3")).toEqual({
      commands: [{ text: "make", name: "make", at: 0 }],
      redirects: [{ op: ">>", path: "../build log", at: 10 }],
    });
    expect(await readCommandLine("> out npm test --flag 2>/dev/null")).toEqual({
      commands: [{ text: "npm test --flag", name: "npm", at: 0 }],
      redirects: [
        { op: ">", path: "out", at: 0 },
        { op: ">", path: "/dev/null", at: 22 },
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
      ["! ! rm x", "`!` twice in a row, whose command bash's grammar here does not read as one"],
    ];
    for (const [command, construct] of cases) expect({ command, ...(await readCommandLine(command)) }).toEqual({ command, unverifiable: construct });
    // Quoted, they are only text.
    expect(texts(await readCommandLine("echo '$(id) `id` (x)'"))).toEqual(["echo '$(id) `id` (x)'"]);
  });

  it("refuses what turns a variable's value into code: prompt expansion, indirection, arithmetic, names given to builtins", async () => {
    const cases: Array<[string, string]> = [
      ["echo '$(id>/tmp/x)'; echo ${_@P}", "prompt expansion (${_@P})"],
      ['echo "${_@P}"', "prompt expansion (${_@P})"],
      ["cat <<EOF\n${HOME@P}\nEOF", "prompt expansion (${HOME@P})"],
      ["echo ${x:-${_@P}}", "prompt expansion (${_@P})"],
      ["echo ${!_}", "indirect expansion (${!_})"],
      ["X=${!_}", "indirect expansion (${!_})"],
      ["echo ${PATH:_:1}", "a substring whose offset or length is an arithmetic expression (${PATH:_:1})"],
      ["echo ${PATH:1:_}", "a substring whose offset or length is an arithmetic expression (${PATH:1:_})"],
      ["echo ${@:_}", "a substring whose offset or length is an arithmetic expression (${@:_})"],
      ['printf -v "$_" x', 'printf given "$_" as a variable\'s name'],
      ["printf -v 'a[$(id)]' x", "printf given 'a[$(id)]' as a variable's name"],
      ["builtin printf -va[$(id)] x", "command substitution ($( ) or backticks)"],
      ["printf $_", "printf with an expanded first argument ($_)"],
      ['read "$_"', 'read given "$_" as a variable\'s name'],
      ["read $_", "read with an unquoted expansion ($_)"],
      ["read -r 'a[$(id)]'", "read given 'a[$(id)]' as a variable's name"],
      ['test -v "$_"', 'test given "$_" as a variable\'s name'],
      ["test -v 'a[$(id)]'", "test given 'a[$(id)]' as a variable's name"],
      ["test $_", "test with an unquoted expansion ($_)"],
      ["[ -v 'a[$(id)]' ]", "a test ([[ ]] or (( )))"],
      ["let x=1", "let, which evaluates arithmetic on variables' values"],
      ["echo 'a[$(id)]'; RANDOM=$_", "an assignment to RANDOM, whose value bash evaluates as arithmetic"],
      ["echo 'a[$(id)]'; OPTIND=$_ echo hi", "an assignment to OPTIND, whose value bash evaluates as arithmetic"],
      ["HISTCMD=$_ SRANDOM=1 echo hi", "an assignment to HISTCMD"],
      ["PS4='$(id)' echo hi", "an assignment to PS4, whose value bash expands as a prompt"],
      ["PROMPT_COMMAND=id bash -i", "an assignment to PROMPT_COMMAND"],
      ["BASH_ENV=$F bash -c :", "an assignment to BASH_ENV, a start-up file known only when it runs"],
      ["coproc curl x", "coproc"],
    ];
    for (const [command, reason] of cases) {
      const line = await readCommandLine(command);
      expect({ command, refused: "unverifiable" in line && line.unverifiable }).toEqual({ command, refused: expect.stringContaining(reason) });
    }
    // What only reads or changes text stays verifiable.
    for (const command of [
      "echo ${PATH:1:2} ${PATH: -3} ${PATH::4} ${#PATH} ${x:-d} ${x:=d} ${x@Q} ${x@U} ${!PATH*} ${!B@} ${x,,} $_ ${#} ${!}",
      'printf -v name "%s" "$_"',
      'read -r -p "$prompt" line rest',
      'test -n "$x"',
      "test -v HOME",
      "RANDOM=5 OPTIND=1 PS4='+ ' echo hi",
    ]) {
      expect({ command, line: await readCommandLine(command) }).toEqual({ command, line: expect.objectContaining({ commands: expect.any(Array) }) });
    }
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
    expect("commands" in read && read.commands.map(({ words }) => words.map((word) => word.value ?? `<${word.text}>`))).toEqual([
      ["a", "1"],
      ["b", "2 3"],
      ["c"],
      ["d", "<`e`>", "<<(g)>"],
      ["e"],
      ["g"],
      ["h"],
      ["i"],
      ["<$J>", "k"],
    ]);
  });

  it("tells where each command reads its input: the pipe before it, a here-document or here-string, a file", async () => {
    const read = await everyCommand("a | { b; c < f; }; d <<< 'x y'; e <<'EOF' | g\nz $v\nEOF\nh <<EOF\n$v\nEOF\ni");
    expect("commands" in read && read.commands.map(({ words, stdin }) => [words[0]!.value, stdin])).toEqual([
      ["a", undefined],
      ["b", { from: "pipe" }],
      ["c", { from: "file", file: { text: "f", value: "f" } }],
      ["d", { from: "text", text: "x y" }],
      ["e", { from: "text", text: "z $v\n" }],
      ["g", { from: "pipe" }],
      ["h", { from: "text", text: undefined }],
      ["i", undefined],
    ]);
  });
});
