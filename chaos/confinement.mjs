// Attack: a command policy's directory confinement, and a principal's process cap, against a real gaggle's process
// child. Lines that change directory out of `cwd_allow` (by path, symlink, `..`, `~`, `-`, variables, pushd/popd,
// spellings of cd) and then write through a relative redirection are run under a policy allowing cd, pushd, popd,
// echo and printf in one folder: a file that appears outside it is an escape. Then commands that fork far past
// `max_processes` must be killed with a note naming the cap, and leave no process.
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { exitText, orphanText } from "./lib/figures.mjs";
import { startStdio, workDir } from "./lib/gaggle.mjs";
import { newMark, orphansOf } from "./lib/procs.mjs";
import { seeded } from "./lib/random.mjs";

export const title = "directory changes past cwd_allow, and forks past max_processes";

const PROCESS_CAP = 24;

/** Ways into `outside` (or somewhere unknown until the line runs) from the folder the line starts in. */
function changes(outside) {
  return [
    `cd ${outside}`,
    `cd "${outside}"`,
    `cd '${outside}/'`,
    `cd ${outside}/.`,
    "cd out-link",
    "cd -P out-link",
    "cd -L out-link/",
    "cd ..",
    "cd ../..",
    "cd sub/../..",
    "cd sub; cd ..; cd ..",
    "cd ~",
    "cd",
    "cd -",
    'cd "$OLDPWD"',
    'cd "$HOME"',
    "cd ${HOME:-/}",
    `cd -- ${outside}`,
    `pushd ${outside}`,
    `pushd sub; pushd ${outside}; popd; popd; pushd ${outside}`,
    `pushd ${outside} >/dev/null`,
    "CDPATH=/ cd tmp",
    `\\cd ${outside}`,
    `'cd' ${outside}`,
    `c""d ${outside}`,
    `builtin cd ${outside}`,
    `command cd ${outside}`,
    `{ cd ${outside}; }`,
    `cd sub && cd ${outside}`,
  ];
}

const GLUE = [" && ", "; ", "\n", " || ", " & "];
const WRITES = [
  (n) => `echo x > w${n}`,
  (n) => `echo x >> w${n}`,
  (n) => `printf x > w${n}`,
  (n) => `echo x &> w${n}`,
  (n) => `echo x 2> w${n} 1>&2`,
];

function configText(extra) {
  return [
    "[gateway]",
    'log_level = "warn"',
    "shutdown_grace_ms = 500",
    "",
    "[virtual.goose]",
    "enabled = false",
    "",
    "[virtual.team]",
    "enabled = false",
    "",
    "[virtual.process]",
    "kill_grace_ms = 300",
    ...extra,
    "",
  ].join("\n");
}

async function startProcessGaggle(dir, name, mark, extra) {
  const config = join(dir, `${name}.toml`);
  writeFileSync(config, configText(extra));
  return startStdio({ config, mark, dir }).initialize();
}

const run_ = (gaggle, args) => gaggle.call("execute_child_tool", { server_id: "process", tool_name: "gg_process_run", arguments: args });
const status = (gaggle, pid) => gaggle.call("execute_child_tool", { server_id: "process", tool_name: "gg_process_status", arguments: { pid } });
const answerOf = (message) => JSON.parse(message.result?.content?.[0]?.text ?? "{}");

/** Waits until the background command `pid` has ended; its final status row. */
async function ended(gaggle, pid) {
  for (;;) {
    const row = answerOf(await status(gaggle, pid));
    if (row.status !== "running") return row;
    await delay(50);
  }
}

export async function run({ scale }) {
  const dir = workDir("confinement");
  const inside = join(dir.path, "inside");
  const outside = join(dir.path, "outside");
  for (const folder of [inside, outside, join(inside, "sub")]) mkdirSync(folder, { recursive: true });
  symlinkSync(outside, join(inside, "out-link"));
  const mark = newMark("confinement");
  const random = seeded(7);

  // Directory changes: every change once with each glue and write, then random picks as the scale asks.
  const policy = [
    "[virtual.process.policy]",
    'allow = ["cd *", "pushd *", "popd", "popd *", "echo *", "printf *", "true", "false"]',
    `cwd_allow = [${JSON.stringify(inside)}]`,
  ];
  const confined = await startProcessGaggle(dir.path, "confined", mark, policy);
  const lines = [];
  const all = changes(outside);
  for (const change of all) lines.push(`${change}${random.pick(GLUE)}${random.pick(WRITES)(lines.length)}`);
  const extra = Math.round(scale * 400);
  for (let n = 0; n < extra; n++) lines.push(`${random.pick(all)}${random.pick(GLUE)}${random.pick(WRITES)(lines.length)}`);
  // Controls: lines the policy allows, whose file must appear inside; one that is refused or writes nothing means
  // the attack is not measuring what it says.
  const controls = ["echo x > c0", "cd sub && echo x > c1", "cd ./sub && printf x > c2", "pushd sub >/dev/null; echo x >> c3"];
  let refused = 0;
  let ran = 0;
  let hung = 0;
  const pids = [];
  const controlRefusals = [];
  for (const command of controls) {
    const answer = await run_(confined, { command, cwd: inside, timeout_ms: 10_000 });
    if (answer.result?.isError) controlRefusals.push(`${command}: ${answerOf(answer).error}`);
    else if (!answer.hung) await ended(confined, answerOf(answer).pid);
  }
  const written = [...readdirSync(inside), ...readdirSync(join(inside, "sub"))].filter((name) => /^c\d$/.test(name));
  const controlsFailed = controls.length - written.length;
  for (const command of lines) {
    const answer = await run_(confined, { command, cwd: inside, timeout_ms: 10_000 });
    if (answer.hung) hung++;
    else if (answer.result?.isError) refused++;
    else {
      ran++;
      pids.push(answerOf(answer).pid);
    }
  }
  for (const pid of pids) await ended(confined, pid);
  const escaped = readdirSync(outside).filter((name) => name.startsWith("w"));
  const escapes = escaped.map((name) => lines[Number(name.slice(1))]);
  const confinedExit = await confined.stop();

  // Forks past the cap: each command is killed, with a note naming the cap.
  const capped = await startProcessGaggle(dir.path, "capped", mark, [`max_processes = ${PROCESS_CAP}`]);
  const bombs = [
    `for i in $(seq ${PROCESS_CAP * 8}); do sleep 60 & done; wait`,
    `for i in $(seq ${PROCESS_CAP * 4}); do (sleep 60 &) ; done; sleep 60`,
    `for i in $(seq ${PROCESS_CAP * 4}); do setsid sleep 60 & done; wait`,
  ];
  const rounds = Math.max(1, Math.round(scale * 3));
  let uncapped = 0;
  const notes = new Set();
  for (let round = 0; round < rounds; round++) {
    for (const command of bombs) {
      const { pid } = answerOf(await run_(capped, { command, cwd: inside, timeout_ms: 30_000 }));
      const row = await ended(capped, pid);
      if (row.status !== "killed" || !/max_processes/.test(row.note ?? "")) uncapped++;
      else notes.add(row.note.replace(/\d+ processes/, "N processes"));
    }
  }
  const cappedExit = await capped.stop();
  const orphans = await orphansOf(mark, 3_000);
  dir.remove();
  return {
    title,
    figures: [
      ["controls", `${controls.length} allowed lines, ${controlsFailed} refused or wrote nothing`],
      ...controlRefusals.map((refusal, n) => [`  refused ${n + 1}`, refusal]),
      ["directory changes", `${lines.length} lines: ${refused} refused, ${ran} ran, ${hung} hung`],
      ["files written outside cwd_allow", escapes.length],
      ...escapes.slice(0, 5).map((line, n) => [`  escape ${n + 1}`, JSON.stringify(line)]),
      ["fork floods", `${rounds * bombs.length} commands past max_processes = ${PROCESS_CAP}: ${uncapped} not killed for it`],
      ...[...notes].slice(0, 2).map((note, n) => [`  note ${n + 1}`, note]),
      ["exits", `${exitText(confinedExit)}; ${exitText(cappedExit)}`],
      ["orphans", orphanText(orphans)],
    ],
    mustBeZero: {
      "controls failed": controlsFailed,
      "files written outside": escapes.length,
      "hung calls": hung,
      "forks not capped": uncapped,
      orphans: orphans.length,
    },
  };
}
