// Attack: the workspace's file tools and shell against a hostile folder. A folder swapped for a symlink to one
// outside the roots while View, LS and Replace use it; FIFOs to view and a FIFO `.gitignore` to search past;
// globs and regular expressions that backtrack exponentially in a naive matcher, while another client pings; and
// jobs that clear their environment (`env -i cmd &`) and must still end with their session.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exitText, orphanText } from "./lib/figures.mjs";
import { workDir } from "./lib/gaggle.mjs";
import { TOKENS, startTwoPrincipals } from "./lib/http-gaggle.mjs";
import { openTokenSession } from "./lib/mcp-http.mjs";
import { isAlive, newMark, orphansOf, watchMemory } from "./lib/procs.mjs";

export const title = "a hostile workspace: symlink swaps, FIFOs, backtracking patterns, env -i jobs";

const SECRET = "outside-secret-0123456789";

export async function run({ scale }) {
  const dir = workDir("workspace");
  const root = join(dir.path, "root");
  const outside = join(dir.path, "outside");
  for (const folder of [root, outside, join(root, "swap")]) mkdirSync(folder);
  writeFileSync(join(outside, "f"), SECRET);
  writeFileSync(join(outside, "outside-only"), "");
  writeFileSync(join(root, "swap", "f"), "inside");
  const mark = newMark("workspace");
  const gaggle = await startTwoPrincipals({ dir: dir.path, root, mark });
  const memory = watchMemory(gaggle.pid);
  const ann = await openTokenSession(gaggle.port, TOKENS.ann);
  const pinger = await openTokenSession(gaggle.port, TOKENS.bob);
  let hung = 0;
  const count = (answer) => (answer.hung && hung++, answer);

  // Swaps: root/swap is a folder, then a symlink to `outside`, over and over, while the tools use it.
  const swaps = Math.max(50, Math.round(scale * 600));
  let escapes = 0;
  let refused = 0;
  let swapping = true;
  const swap = join(root, "swap");
  const link = join(root, "swap-link");
  const held = join(root, "swap-held");
  // gaggle runs beside this loop: a Replace may make `swap` again (its parent folders) between two renames. Then
  // what it made is dropped and the folder put back.
  const restore = () => {
    if (!existsSync(held)) return;
    rmSync(swap, { recursive: true, force: true });
    renameSync(held, swap);
  };
  const swapper = (async () => {
    while (swapping) {
      try {
        rmSync(link, { force: true });
        symlinkSync(outside, link);
        renameSync(swap, held);
        renameSync(link, swap);
      } catch {
        restore();
      }
      await new Promise((resolve) => setImmediate(resolve));
      try {
        restore();
      } catch {
        // Made again while we looked: the next round puts it back.
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    restore();
  })();
  for (let round = 0; round < swaps; round++) {
    const viewed = count(await ann.tool("workspace", "View", { file_path: "swap/f" }));
    const listed = count(await ann.tool("workspace", "LS", { path: "swap" }));
    count(await ann.tool("workspace", "Replace", { file_path: "swap/f", content: "inside" }));
    if (viewed.text?.includes(SECRET)) escapes++;
    if (viewed.text?.includes("outside the allowed roots")) refused++;
    if (listed.text?.includes("outside-only")) escapes++;
  }
  swapping = false;
  await swapper;
  const overwritten = readFileSync(join(outside, "f"), "utf8") === SECRET ? 0 : 1;

  // FIFOs: viewed, listed and searched past (one as a .gitignore); a ping from the other client is answered after each.
  execFileSync("mkfifo", [join(root, "fifo"), join(root, ".gitignore")]);
  let fifoPings = 0;
  for (const [tool, args] of [
    ["View", { file_path: "fifo" }],
    ["GrepTool", { pattern: "x", path: "." }],
    ["GlobTool", { pattern: "**/*" }],
    ["LS", { path: "." }],
  ]) {
    count(await ann.tool("workspace", tool, args));
    if (!count(await pinger.request("ping", {})).hung) fifoPings++;
  }
  rmSync(join(root, "fifo"));
  rmSync(join(root, ".gitignore"));

  // Backtracking: a pattern exponential for a naive matcher, over a name or a line built to make it so; the other
  // client's pings, sent meanwhile, are timed.
  writeFileSync(join(root, `${"a".repeat(70)}`), "");
  writeFileSync(join(root, "lines.txt"), `${"a".repeat(5000)}!\n`);
  const patterns = [
    ["GlobTool", { pattern: "**a**a**a**a**a**a**a**a**b" }],
    ["GrepTool", { pattern: "(a+)+$", path: "." }],
    ["GrepTool", { pattern: "(a|aa)+$", path: "." }],
    ["GrepTool", { pattern: "(a*)*b", include: "*.txt" }],
  ];
  let slowestPingMs = 0;
  for (let round = 0; round < Math.max(1, Math.round(scale * 5)); round++) {
    for (const [tool, args] of patterns) {
      const searching = ann.tool("workspace", tool, args).then(count);
      const sent = Date.now();
      count(await pinger.request("ping", {}));
      slowestPingMs = Math.max(slowestPingMs, Date.now() - sent);
      await searching;
    }
  }

  // env -i jobs: each in a session of its own, which then ends; the job must end with it.
  const jobs = Math.max(3, Math.round(scale * 15));
  const outlived = [];
  for (let job = 0; job < jobs; job++) {
    const session = await openTokenSession(gaggle.port, TOKENS.ann);
    // A command before it: from the second command on, a job runs with the options the last one left.
    count(await session.tool("workspace", "Bash", { command: "true" }));
    const said = count(await session.tool("workspace", "Bash", { command: "env -i sleep 600 > /dev/null 2>&1 & echo $!" }));
    const pid = Number(/^\d+/.exec(said.text ?? "")?.[0]);
    await session.close();
    outlived.push(pid);
  }
  const deadline = Date.now() + 10_000;
  let left = outlived.filter((pid) => pid > 0 && isAlive(pid));
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = left.filter(isAlive);
  }
  for (const pid of left) process.kill(pid, "SIGKILL");

  const alive = gaggle.alive();
  await Promise.all([ann.close(), pinger.close()]);
  const peakKiB = memory.stop();
  const exit = await gaggle.stop("SIGTERM");
  const orphans = await orphansOf(mark, 5000);
  dir.remove();
  return {
    title,
    figures: [
      [
        "symlink swaps",
        `${swaps} rounds of View, LS and Replace while root/swap flips to a symlink outside (${refused} Views found it outside and were refused): ${escapes} escapes, outside file ${overwritten ? "OVERWRITTEN" : "untouched"}`,
      ],
      ["FIFOs", `View, GrepTool (a FIFO .gitignore), GlobTool, LS: ${fifoPings} of 4 pings after them answered`],
      ["backtracking patterns", `${patterns.length} patterns; the other client's slowest ping meanwhile ${slowestPingMs} ms`],
      ["env -i jobs", `${jobs} sessions each left one and ended: ${left.length} outlived their session`],
      ["hung", hung],
      ["gaggle exit", exitText(exit)],
      ["orphans", orphanText(orphans)],
    ],
    mustBeZero: {
      escapes,
      "outside file overwritten": overwritten,
      "pings unanswered after a FIFO": 4 - fifoPings,
      "env -i jobs outliving their session": left.length,
      hung,
      orphans: orphans.length,
      "gaggle died": alive ? 0 : 1,
    },
    peakKiB,
    orphans: orphans.length,
  };
}
