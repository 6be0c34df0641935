// Attack: every known spelling of a banned command (chaos/lib/curl-spellings.mjs), alone and wrapped in the ways a
// line can hold it (after other commands, in a group, a subshell, a function, a string run by a shell), through the
// workspace's banned-command check; and each value-turned-code spelling through the command policy's reading. One
// that gets through would run a banned command, or one the policy does not allow.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { CURL_SPELLINGS } from "./lib/curl-spellings.mjs";
import { ROOT } from "./lib/gaggle.mjs";

export const title = "banned-command spellings and values turned into code";

/** Ways to hold a line inside another; each keeps what the line runs. */
const WRAPS = [
  (line) => line,
  (line) => `echo ok; ${line}`,
  (line) => `true && { ${line}; }`,
  (line) => `( ${line} )`,
  (line) => `f() { ${line}; }; f`,
  (line) => `bash -c ${quote(line)}`,
  (line) => `eval ${quote(line)}`,
  (line) => `if true; then ${line}; fi`,
];

function quote(text) {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export async function run({ scale }) {
  const dist = (...parts) => pathToFileURL(join(ROOT, "dist", "virtual", "shell", ...parts)).href;
  const { refuseBanned } = await import(dist("banned.js"));
  const { readCommandLine } = await import(dist("command-grammar.js"));
  const rounds = Math.max(1, Math.round(scale * 5));
  const through = [];
  let tried = 0;
  for (let round = 0; round < rounds; round++) {
    for (const wrap of WRAPS) {
      for (const spelling of CURL_SPELLINGS) {
        const line = wrap(spelling);
        tried++;
        const refused = await refuseBanned(line).then(
          () => false,
          () => true,
        );
        if (!refused) through.push(line);
      }
    }
  }
  // Under a policy allowing only echo, printf, read and the assignments, a value made code must be refused.
  const hidden = [
    "echo '$(id)'; echo ${_@P}",
    "echo 'a[$(id)]'; echo ${!_}",
    "echo 'a[$(id)]'; echo ${PATH:_:1}",
    "echo 'a[$(id)]'; echo ${PATH:1:_}",
    "echo 'a[$(id)]'; printf -v \"$_\" x",
    "echo 'a[$(id)]'; read \"$_\"",
    "echo 'a[$(id)]'; RANDOM=$_",
    "echo 'a[$(id)]'; OPTIND=$_ echo x",
    "echo 'a[$(id)]'; a[$_]=1",
    "PS4='$(id)' echo x",
  ];
  const verifiable = [];
  for (const line of hidden) if (!("unverifiable" in (await readCommandLine(line)))) verifiable.push(line);
  return {
    title,
    figures: [
      ["banned spellings", `${CURL_SPELLINGS.length} spellings x ${WRAPS.length} ways to hold them x ${rounds} rounds = ${tried} lines`],
      ["let through", through.length],
      ...[...new Set(through)].slice(0, 5).map((line, n) => [`  through ${n + 1}`, JSON.stringify(line)]),
      ["values turned into code", `${hidden.length} lines, ${verifiable.length} read as verifiable`],
      ...verifiable.map((line, n) => [`  verifiable ${n + 1}`, JSON.stringify(line)]),
    ],
    mustBeZero: { "banned let through": through.length, "code read as verifiable": verifiable.length },
  };
}
