// What bash itself runs for a command line, as the judge of a reading of it (readCommandLine): stub commands on
// PATH record that they ran, and a redirection's file shows in the working directory. A reading that calls a line
// verifiable must list every command bash ran and every file it created; anything else would let a command past
// a policy. Used by the chaos run's policy corpus and by the bounded corpus in the test suite.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The stub commands: none is a bash builtin. */
export const NAMES = ["aa", "bb", "cc", "dd"];

/** Escapes, quotes and redirections that once hid a command from the policy, then more of bash's rarer forms. */
export const VOCABULARY = {
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

/** One generated line of one to three stub commands with arguments and redirections, joined by operators. */
export function corpusLine(r, { words, redirections, operators }) {
  const glue = () => r.pick([" ", " ", "", "  "]);
  const parts = [];
  for (let c = 0, commands = 1 + r.int(3); c < commands; c++) {
    if (c > 0) parts.push(r.pick(operators));
    parts.push(r.pick(NAMES));
    for (let a = 0, args = r.int(4); a < args; a++) parts.push(glue(), r.int(3) === 0 ? r.pick(redirections) : r.pick(words));
  }
  return parts.join("");
}

/** A scratch folder with the stubs; `misses(command, line)` runs the command in bash and says what the reading missed. */
export function bashOracle() {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-bash-oracle-"));
  const bin = join(dir, "bin");
  const work = join(dir, "work");
  const ran = join(dir, "ran");
  mkdirSync(bin);
  mkdirSync(work);
  for (const name of NAMES) {
    writeFileSync(join(bin, name), `#!/bin/sh\nprintf '%s\\n' "\${0##*/}" >> "$RAN"\n`);
    chmodSync(join(bin, name), 0o755);
  }
  return {
    /** What bash ran or created that `line` (a reading of `command` that called it verifiable) did not list. */
    misses(command, line) {
      rmSync(ran, { force: true });
      for (const file of readdirSync(work)) rmSync(join(work, file), { recursive: true, force: true });
      spawnSync("bash", ["--norc", "--noprofile", "-c", command], {
        cwd: work,
        env: { PATH: bin, RAN: ran },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 5000,
      });
      const seen = new Set(line.commands.map((simple) => simple.name));
      const opened = new Set(line.redirects.map((redirect) => redirect.path));
      return [
        ...readLines(ran).filter((name) => !seen.has(name)),
        ...readdirSync(work)
          .filter((file) => !opened.has(file))
          .map((file) => `file ${file}`),
      ];
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function readLines(path) {
  try {
    return readFileSync(path, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}
