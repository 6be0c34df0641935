// A file on a hung mount (an NFS server gone, a stuck FUSE daemon) holds only the calls that reach it: gaggle runs
// under strace, which holds each open of one file for longer than the test runs, as such a mount would, while the
// calls of other files are answered.
import { readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../../helpers/poll.js";
import { descendants, waitGone } from "../../helpers/processes.js";
import { fileUnder, scratch, workspaceGaggle } from "./helpers.js";

/** How long an open of the hung file waits (µs): longer than the test runs. */
const HUNG_US = 300_000_000;
/** Fewer than the four threads Node gives file system calls: four at once would hold every other one back. */
const HUNG_CALLS = 3;

let close: (() => Promise<void>) | undefined;

afterEach(async () => {
  await close?.();
  close = undefined;
});

/** Threads of the process stopped by its tracer: here, each one held in an open of the hung file. */
function heldThreads(pid: number): number {
  let held = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("t")) held++;
    } catch {
      // The thread ended while we looked.
    }
  }
  return held;
}

describe("a hung file", () => {
  it("holds the calls that open it, and no other", async () => {
    const root = scratch();
    const hung = fileUnder(root, "hung.txt", "never read\n");
    const other = fileUnder(root, "other.txt", "read at once\n");
    // strace stops gaggle at an open of the hung file alone (with seccomp, no other call is even traced).
    const strace = [
      "strace",
      "-f",
      "-qq",
      "--seccomp-bpf",
      "-e",
      "trace=openat",
      "-P",
      hung,
      "-e",
      `inject=openat:delay_enter=${HUNG_US}`,
      "-o",
      "/dev/null",
    ];
    const gaggle = await workspaceGaggle(root, "", { through: strace });
    close = () => gaggle.close();
    const [gagglePid] = descendants(gaggle.pid);

    const settled = Array.from({ length: HUNG_CALLS }, () => false);
    // Each ends when gaggle does, its connection closed: only whether it ended before is asked.
    for (let i = 0; i < HUNG_CALLS; i++)
      void gaggle.call("View", { file_path: hung }).then(
        () => (settled[i] = true),
        () => (settled[i] = true),
      );
    // Every one of them holds a thread, stopped in its open.
    await until(
      () => heldThreads(gagglePid!),
      (held) => held === HUNG_CALLS,
    );
    expect(await gaggle.text("View", { file_path: other })).toContain("read at once");
    expect(await gaggle.text("LS", { path: root })).toContain("other.txt");
    expect(await gaggle.text("GlobTool", { pattern: "*.txt" })).toContain("2 files");
    expect(settled).toEqual(Array.from({ length: HUNG_CALLS }, () => false));

    // The tracer gone, and the client with it: gaggle ends, and nothing it started is left.
    const started = descendants(gaggle.pid);
    process.kill(gaggle.pid, "SIGKILL");
    await gaggle.close();
    close = undefined;
    expect(await waitGone(started)).toEqual([]);
  }, 60_000);
});
