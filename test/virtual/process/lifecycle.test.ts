// Processes that misbehave: ignore SIGTERM, leave grandchildren, print 200 MB, outnumber the limit. None outlives gaggle.
import { randomUUID } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startGaggle, type RunningGaggle } from "../../helpers/gaggle.js";
import { fixture } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";
import { startHttpGaggle } from "../../helpers/gaggle-http.js";
import { carrying, isAlive, killCarrying, waitGone } from "../../helpers/processes.js";
import { ended, processConfig, processFailure, processJson, run, status, type Status } from "./helpers.js";

const STUBBORN = `${JSON.stringify(process.execPath)} ${JSON.stringify(fixture("process/stubborn.mjs"))}`;

/** Starts the stubborn fixture and waits for it to print its pid and its grandchild's. */
async function startStubborn(gaggle: RunningGaggle): Promise<{ pid: number; pids: number[] }> {
  const started = await run(gaggle.client, STUBBORN);
  const live = await until(
    () => status(gaggle.client, started.pid),
    (s) => /pids \d+ \d+/.test(s.output),
  );
  const [, own, grandchild] = /pids (\d+) (\d+)/.exec(live.output) ?? [];
  const pids = [Number(own), Number(grandchild)];
  expect(pids.every(isAlive)).toBe(true);
  return { pid: started.pid, pids };
}

function rssKb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1]);
}

describe("a process that ignores SIGTERM and has a grandchild", () => {
  it("is gone, grandchild included, after gg_process_kill", async () => {
    const gaggle = await startGaggle(processConfig("[virtual.process]\nkill_grace_ms = 300\n").text);
    try {
      const { pid, pids } = await startStubborn(gaggle);
      const killed = await processJson<Status>(gaggle.client, "gg_process_kill", { pid });
      expect(killed.status).toBe("killed");
      expect(await waitGone(pids)).toEqual([]);
    } finally {
      await gaggle.close();
    }
  });

  it("is gone, grandchild included, when gaggle shuts down", async () => {
    const gaggle = await startGaggle(processConfig("[virtual.process]\nkill_grace_ms = 300\n").text);
    const { pids } = await startStubborn(gaggle);
    const quiet = await run(gaggle.client, "sleep 60");
    await gaggle.close();
    expect(await waitGone([gaggle.pid, quiet.pid, ...pids])).toEqual([]);
  });

  it("is gone when gaggle itself is SIGKILLed (the watchdog reaps its group)", async () => {
    const gaggle = await startGaggle(processConfig("", "shutdown_grace_ms = 300").text);
    const { pids } = await startStubborn(gaggle);
    process.kill(gaggle.pid, "SIGKILL");
    expect(await waitGone([gaggle.pid, ...pids])).toEqual([]);
    await gaggle.close().catch(() => {});
  });
});

describe("a process that prints 200 MB", () => {
  it("is read as it prints, capped on disk, while gaggle's memory stays flat", async () => {
    const gaggle = await startGaggle(processConfig().text);
    try {
      // Warm up the code paths first, so the comparison measures the output and not first-use allocations.
      await ended(gaggle.client, (await run(gaggle.client, "echo warm")).pid);
      const before = rssKb(gaggle.pid);
      const started = await run(gaggle.client, "yes 'a line of output, repeated until two hundred megabytes have gone by' | head -c 209715200");
      const done = await ended(gaggle.client, started.pid, 60_000);
      const after = rssKb(gaggle.pid);
      const cap = 20 * 1024 * 1024;
      expect(done).toMatchObject({ status: "completed", truncated: true, output_bytes: cap, dropped_bytes: 209715200 - cap });
      expect(statSync(started.log_file).size).toBe(cap);
      expect(done.output).toContain("[output truncated:");
      expect(after - before).toBeLessThan(100 * 1024);
    } finally {
      await gaggle.close();
    }
  }, 90_000);
});

describe("limits", () => {
  it("refuses a run past max_concurrent, saying how to make room", async () => {
    const gaggle = await startGaggle(processConfig("[virtual.process]\nmax_concurrent = 2\nkill_grace_ms = 300\n").text);
    try {
      const first = await run(gaggle.client, "sleep 30");
      await run(gaggle.client, "sleep 30");
      const refused = await processFailure(gaggle.client, "gg_process_run", { command: "true" });
      expect(refused.code).toBe("LIMIT_REACHED");
      expect(refused.error).toContain("max_concurrent");
      expect(refused.hint).toContain("gg_process_kill");
      await processJson(gaggle.client, "gg_process_kill", { pid: first.pid });
      expect((await ended(gaggle.client, (await run(gaggle.client, "true")).pid)).status).toBe("completed");
    } finally {
      await gaggle.close();
    }
  });

  it("caps output at max_output_bytes and keeps the process running", async () => {
    const gaggle = await startGaggle(processConfig("[virtual.process]\nmax_output_bytes = 1000\n").text);
    try {
      const started = await run(gaggle.client, "seq 1 100000; echo still-running-after-the-cap > /dev/stderr; sleep 0.2; echo done-file > done.txt", {
        cwd: processConfig().stateDir,
      });
      const done = await ended(gaggle.client, started.pid);
      expect(done).toMatchObject({ status: "completed", output_bytes: 1000, truncated: true });
      expect(statSync(started.log_file).size).toBe(1000);
      expect(readFileSync(`${started.cwd}/done.txt`, "utf8")).toBe("done-file\n");
    } finally {
      await gaggle.close();
    }
  });
});

describe("a principal's background commands past max_processes", () => {
  it("are all killed, saying why, while another principal's run on", async () => {
    const tokens = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };
    const mark = `GAGGLE_TEST_MARK=${randomUUID()}`;
    const gateway = 'auth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }';
    const http = await startHttpGaggle(processConfig("[virtual.process]\nmax_processes = 20\nkill_grace_ms = 300\n", gateway).text, {
      env: { ...tokens, GAGGLE_TEST_MARK: mark.split("=")[1]! },
    });
    try {
      const ann = await http.connect({ name: "ann", headers: { authorization: `Bearer ${tokens.GAGGLE_TEST_ANN}` } });
      const bob = await http.connect({ name: "bob", headers: { authorization: `Bearer ${tokens.GAGGLE_TEST_BOB}` } });
      const bobs = await run(bob, "sleep 321");
      const quiet = await run(ann, "sleep 322");
      const forker = await run(ann, "for i in $(seq 60); do sleep 323 & done; wait");
      for (const pid of [forker.pid, quiet.pid]) {
        const end = await ended(ann, pid);
        expect(end.status).toBe("killed");
        expect(end.note).toMatch(
          /^killed by gaggle: "ann"'s background commands ran \d+ processes at once, past the cap of 20 \(\[virtual\.process\] max_processes\)/,
        );
      }
      expect(carrying(mark).filter((pid) => /^sleep 32[23]/.test(commandLine(pid)))).toEqual([]);
      expect((await status(bob, bobs.pid)).status).toBe("running");
    } finally {
      await http.stop();
      killCarrying(mark);
    }
  });
});

/** The command line of `pid`, its arguments joined by spaces; empty once it is gone. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}
