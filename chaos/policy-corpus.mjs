// Attack: the process policy's reading of command lines (readCommandLine, tree-sitter-bash) checked against what
// bash itself runs, over a generated corpus far larger than test/virtual/shell/command-grammar.test.ts runs: stub
// commands on PATH record that they ran, and a redirection's file shows in the working directory. A miss (a
// command bash ran, or a file it created, that the reading did not list for a line it called verifiable) would
// let a command past a policy.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT, workDir } from "./lib/gaggle.mjs";
import { seeded } from "./lib/random.mjs";

export const title = "policy bypass corpus against bash";

const NAMES = ["aa", "bb", "cc", "dd"];
/** The test's vocabulary, then more of bash's: ANSI-C quotes, braces, globs, tilde, and the rarer redirections. */
const VOCABULARY = {
  test: {
    words: ["x", "'y z'", '"q"', "\\>", "\\&", "\\|", "a\\>", "\\<", "\\;", "\\\\", "#c", "b\\ c", "'>'", '">&"', "=", "-"],
    redirections: [">f1", ">>f2", "2>&1", ">&f3", ">|f4", "<&0", "> f5", "2>/dev/null", "&>f6", "<f1", ">'f 7'", "1>&2"],
    operators: [" ; ", " && ", " || ", " | ", " & ", "\n", " |& ", ";", "&", "|", "&&"],
  },
  wider: {
    words: ["$'\\x3e'", "$'a b'", "{a,b}", "~", "*", "a=b", '"a\\"b"', "'", '\\"', "!", "--", "$'\\''"],
    redirections: ["<>f8", ">&-", "2>>f9", "&>>f10", "<<<w", "3>f11", "1>|f12", ">\\ f13", "2<&-", ">f14\\"],
    operators: [" ;; ", " ! ", "\\\n"],
  },
};

export async function run({ scale }) {
  const cases = 2 * Math.max(200, Math.round(1200 * scale));
  const { readCommandLine } = await import(pathToFileURL(join(ROOT, "dist", "virtual", "shell", "command-grammar.js")).href);
  const dir = workDir("policy");
  const bin = join(dir.path, "bin");
  const work = join(dir.path, "work");
  const ran = join(dir.path, "ran");
  mkdirSync(bin);
  mkdirSync(work);
  for (const name of NAMES) {
    writeFileSync(join(bin, name), `#!/bin/sh\nprintf '%s\\n' "\${0##*/}" >> "$RAN"\n`);
    chmodSync(join(bin, name), 0o755);
  }
  const figures = [];
  const misses = [];
  let verifiableTotal = 0;
  // Half the corpus in the test's vocabulary (from the test's seed on), half with bash's rarer forms added.
  for (const [part, seed, words, redirections, operators] of [
    ["the test's vocabulary", 20261124, VOCABULARY.test.words, VOCABULARY.test.redirections, VOCABULARY.test.operators],
    [
      "a wider vocabulary",
      7,
      [...VOCABULARY.test.words, ...VOCABULARY.wider.words],
      [...VOCABULARY.test.redirections, ...VOCABULARY.wider.redirections],
      [...VOCABULARY.test.operators, ...VOCABULARY.wider.operators],
    ],
  ]) {
    const r = seeded(seed);
    const glue = () => r.pick([" ", " ", "", "  "]);
    let verifiable = 0;
    const partMisses = misses.length;
    for (let i = 0; i < cases / 2; i++) {
      const parts = [];
      for (let c = 0, commands = 1 + r.int(3); c < commands; c++) {
        if (c > 0) parts.push(r.pick(operators));
        parts.push(r.pick(NAMES));
        for (let a = 0, args = r.int(4); a < args; a++) parts.push(glue(), r.int(3) === 0 ? r.pick(redirections) : r.pick(words));
      }
      const command = parts.join("");
      const line = await readCommandLine(command);
      rmSync(ran, { force: true });
      for (const file of readdirSync(work)) rmSync(join(work, file), { recursive: true, force: true });
      spawnSync("bash", ["--norc", "--noprofile", "-c", command], {
        cwd: work,
        env: { PATH: bin, RAN: ran },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 5000,
      });
      if ("unverifiable" in line) continue; // refused, so never run: always safe
      verifiable++;
      const seen = new Set(line.commands.map((simple) => simple.name));
      const ranNames = readLines(ran);
      const opened = new Set(line.redirects.map((redirect) => redirect.path));
      const missed = [
        ...ranNames.filter((name) => !seen.has(name)),
        ...readdirSync(work)
          .filter((file) => !opened.has(file))
          .map((file) => `file ${file}`),
      ];
      if (missed.length > 0) misses.push(`${JSON.stringify(command)} missed ${missed.join(", ")}`);
    }
    verifiableTotal += verifiable;
    figures.push([`  ${part}`, `${cases / 2} lines, ${verifiable} verifiable, ${misses.length - partMisses} missed`]);
  }
  dir.remove();
  return {
    title,
    figures: [
      ["cases", cases],
      ["verifiable", `${verifiableTotal} (the rest are refused as unverifiable, so never run)`],
      ...figures,
      ["misses", misses.length],
      ...misses.slice(0, 5).map((miss, n) => [`  miss ${n + 1}`, miss]),
    ],
    mustBeZero: { misses: misses.length },
  };
}

function readLines(path) {
  try {
    return readFileSync(path, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}
