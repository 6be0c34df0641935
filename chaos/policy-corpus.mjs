// Attack: the process policy's reading of command lines (readCommandLine, tree-sitter-bash) checked against what
// bash itself runs, over a generated corpus far larger than test/virtual/shell/command-grammar.test.ts runs: stub
// commands on PATH record that they ran, and a redirection's file shows in the working directory. A miss (a
// command bash ran, or a file it created, that the reading did not list for a line it called verifiable) would
// let a command past a policy.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { bashOracle, corpusLine, VOCABULARY } from "./lib/bash-oracle.mjs";
import { ROOT } from "./lib/gaggle.mjs";
import { seeded } from "./lib/random.mjs";

export const title = "policy bypass corpus against bash";

export async function run({ scale }) {
  const cases = 2 * Math.max(200, Math.round(1200 * scale));
  const { readCommandLine } = await import(pathToFileURL(join(ROOT, "dist", "virtual", "shell", "command-grammar.js")).href);
  const oracle = bashOracle();
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
    let verifiable = 0;
    const partMisses = misses.length;
    for (let i = 0; i < cases / 2; i++) {
      const command = corpusLine(r, { words, redirections, operators });
      const line = await readCommandLine(command);
      if ("unverifiable" in line) continue; // refused, so never run: always safe
      verifiable++;
      const missed = oracle.misses(command, line);
      if (missed.length > 0) misses.push(`${JSON.stringify(command)} missed ${missed.join(", ")}`);
    }
    verifiableTotal += verifiable;
    figures.push([`  ${part}`, `${cases / 2} lines, ${verifiable} verifiable, ${misses.length - partMisses} missed`]);
  }
  oracle.remove();
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
