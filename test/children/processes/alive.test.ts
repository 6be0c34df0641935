// processAlive, which tells whether a daemon holding gaggle's lock runs: a live process is alive, a gone one is not,
// and a zombie (exited, not yet reaped) is not where /proc shows its state. Where /proc is not mounted (a sandbox),
// the signal's answer is all there is: that path is taken in a user and mount namespace with /proc covered.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { once } from "node:events";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { processAlive } from "../../../src/children/processes/process-tree.js";
import { ROOT } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

const run = promisify(execFile);

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
});

/** The state letter of `pid` in /proc ("" once it is gone). */
function stateOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return "";
  }
}

/**
 * A live process, a zombie and a gone one. The zombie is a shell's background job that ends, by reading the byte
 * the test writes, only once the shell has become `sleep`, which never reaps it.
 */
async function threeProcesses(): Promise<{ live: number; zombie: number; gone: number }> {
  const live = spawn("sleep", ["300"], { stdio: "ignore" });
  const parent = spawn("/bin/sh", ["-c", "exec 3<&0; head -c 1 <&3 >/dev/null & echo $!; exec sleep 300"], { stdio: ["pipe", "pipe", "ignore"] });
  started.push(live, parent);
  const [line] = (await once(parent.stdout!, "data")) as [Buffer];
  const zombie = Number(line.toString().trim());
  await until(
    () => readFileSync(`/proc/${parent.pid}/comm`, "utf8").trim(),
    (name) => name === "sleep",
  );
  parent.stdin!.write("x");
  await until(
    () => stateOf(zombie),
    (state) => state === "Z",
  );
  const ended = spawn("true", { stdio: "ignore" });
  await once(ended, "exit");
  return { live: live.pid!, zombie, gone: ended.pid! };
}

/** processAlive of the built gaggle, asked in a process whose /proc is an empty folder, with whether it saw /proc. */
async function askedWithoutProc(pids: number[]): Promise<{ proc: boolean; alive: boolean[] }> {
  const probe = [
    'import { existsSync } from "node:fs";',
    "const { processAlive } = await import(process.argv[1]);",
    "const alive = process.argv.slice(2).map((pid) => processAlive(Number(pid)));",
    'process.stdout.write(JSON.stringify({ proc: existsSync("/proc/self/stat"), alive }));',
  ].join("\n");
  const dist = `${ROOT}dist/children/processes/process-tree.js`;
  // Mapped root in a user namespace of its own may mount a tmpfs over /proc in a mount namespace of its own.
  const cover = 'mount -t tmpfs none /proc && exec "$0" "$@"';
  const { stdout } = await run("unshare", [
    "--user",
    "--map-root-user",
    "--mount",
    "/bin/sh",
    "-c",
    cover,
    process.execPath,
    "--input-type=module",
    "-e",
    probe,
    dist,
    ...pids.map(String),
  ]);
  return JSON.parse(stdout) as { proc: boolean; alive: boolean[] };
}

describe("processAlive", () => {
  it("where /proc shows a process's state: a live process is alive, a zombie and a gone process are not", async () => {
    const { live, zombie, gone } = await threeProcesses();
    expect({ live: processAlive(live), zombie: processAlive(zombie), gone: processAlive(gone) }).toEqual({
      live: true,
      zombie: false,
      gone: false,
    });
  });

  it("without /proc, answers by the signal alone: a live process and a zombie are alive, a gone process is not", async () => {
    const { live, zombie, gone } = await threeProcesses();
    expect(await askedWithoutProc([live, zombie, gone])).toEqual({ proc: false, alive: [true, true, false] });
  });
});
