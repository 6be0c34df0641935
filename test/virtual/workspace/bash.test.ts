// Bash through a real gaggle: one persistent shell per client session, whose state survives every command, a
// command past its time killed with what it started while the shell goes on, output capped, banned commands refused.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import type { RunningGaggle } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { httpTransportOf } from "../../helpers/raw-http.js";
import { carrying, isAlive, killCarrying, waitGone } from "../../helpers/processes.js";
import { scratch, toolsOf, workspaceConfig, workspaceGaggle, type Tools } from "./helpers.js";

describe("Bash", () => {
  let root: string;
  let gaggle: RunningGaggle & Tools;
  beforeAll(async () => {
    root = scratch();
    mkdirSync(join(root, "sub dir"));
    gaggle = await workspaceGaggle(root, "max_output_chars = 1000\nkill_grace_ms = 300\n");
  });
  afterAll(() => gaggle.close());

  it("starts in the first root, and keeps the working directory, variables, functions and options between commands", async () => {
    expect(await gaggle.bash("pwd")).toBe(`${root}\n`);
    await gaggle.bash(
      `cd "sub dir" && export GREETING=hello && plain=kept && declare -a list=(a "b c") && greet() { echo "$GREETING $1"; } && shopt -s extglob && set -o pipefail`,
    );
    expect(
      await gaggle.bash(`pwd; echo "$GREETING $plain \${list[1]}"; greet world; shopt -q extglob && echo extglob; false | true || echo pipefail`),
    ).toBe(`${root}/sub dir\nhello kept b c\nhello world\nextglob\npipefail\n`);
    // Exported variables reach the programs a command runs; unset and unset -f are kept too.
    expect(await gaggle.bash("sh -c 'echo $GREETING'")).toBe("hello\n");
    await gaggle.bash("unset plain; unset -f greet; cd ..");
    expect(await gaggle.bash('echo "[${plain-gone}]"; type greet >/dev/null 2>&1 || echo no-greet; pwd')).toBe(`[gone]\nno-greet\n${root}\n`);
  });

  it("answers stdout and stderr in the order written, with the exit status; exit ends the command, not the shell", async () => {
    expect(await gaggle.text("Bash", { command: "echo one; echo two >&2; echo three; exit 3" })).toBe("one\ntwo\nthree\n[exit status 3]");
    expect(await gaggle.text("Bash", { command: "true" })).toBe("(no output)\n[exit status 0]");
    expect(await gaggle.text("Bash", { command: "printf 'no newline'" })).toBe("no newline\n[exit status 0]");
    expect(await gaggle.bash("echo still here")).toBe("still here\n");
  });

  it("reads no input: a command that reads stdin gets end of file at once", async () => {
    expect(await gaggle.text("Bash", { command: 'cat; read line; echo "read $?"' })).toBe("read 1\n[exit status 0]");
  });

  it("cuts output past max_output_chars, saying how much was dropped", async () => {
    const text = await gaggle.text("Bash", { command: "head -c 5000 /dev/zero | tr '\\0' x; echo" });
    expect(text.startsWith(`${"x".repeat(1000)}\n[output cut: 4001 more characters were dropped after the first 1000`)).toBe(true);
    expect(text).toContain("[virtual.workspace] max_output_chars");
    expect(text.endsWith("[exit status 0]")).toBe(true);
  });

  it("kills a command past its timeout with every process it started; the shell keeps its state, and what the command changed before", async () => {
    await gaggle.bash("cd / && export KEPT=yes");
    const pids = join(root, "pids");
    const started = Date.now();
    const refused = await gaggle.failure("Bash", {
      command: `sleep 301 & echo $! > ${pids}; ${setsidSleep(`${pids}.setsid`)} echo working; cd /tmp; sleep 303`,
      timeout: 1000,
    });
    expect(Date.now() - started).toBeLessThan(8000);
    expect(refused).toMatchObject({
      code: "TIMEOUT",
      error: expect.stringMatching(/^the command ran past its timeout of 1000 ms and was killed .* What it printed before:\nworking\n$/s),
    });
    const left = [Number(readFileSync(pids, "utf8")), await pidIn(`${pids}.setsid`)];
    expect(await waitGone(left)).toEqual([]);
    expect(await gaggle.bash("echo $KEPT; pwd")).toBe("yes\n/tmp\n");
    await gaggle.bash(`cd ${JSON.stringify(root)}`);
  });

  it("stops a builtin loop past its timeout too: it runs in a job of its own, never in the shell", async () => {
    expect((await gaggle.failure("Bash", { command: "while :; do :; done", timeout: 500 })).code).toBe("TIMEOUT");
    expect(await gaggle.bash("echo after")).toBe("after\n");
  });

  it("refuses banned commands however they are written, and runs commands that only name them", async () => {
    const disguises = [
      "curl example.com",
      "/usr/bin/curl example.com",
      "./curl x",
      "~/bin/wget x",
      "'curl' x",
      "c\\url x",
      "echo ok && wget example.com",
      "echo ok; nc -l 80",
      "echo data | curl -X POST example.com",
      "echo $(curl example.com)",
      "echo `curl example.com`",
      'echo "$(wget -qO- x)"',
      "x=$(echo hi; curl y)",
      "cat <(curl x)",
      "env FOO=1 curl x",
      "env -i PATH=/usr/bin curl x",
      "sudo -u root curl x",
      "sudo env nice -n 5 timeout 10 curl x",
      "command curl x",
      "exec curl x",
      "nohup wget x &",
      "xargs -n 1 curl < urls",
      "find . -name '*.url' -exec curl {} \\;",
      "bash -c 'curl x'",
      'sh -lc "echo; telnet host"',
      "eval 'curl x'",
      "f() { curl x; }",
      "for u in a b; do wget $u; done",
      "if true; then lynx x; fi",
      "(cd /tmp && curl x)",
      "curl=curl && $curl example.com",
      "$CMD example.com",
      "alias get=curl",
      "http GET example.com",
      "firefox index.html",
      "'cu'rl x",
      "env -S 'curl x'",
      "watch -n 1 curl x",
      "flock /tmp/lock curl x",
      "timeout -s KILL 5 wget x",
      "busybox wget x",
      "doas -u me setsid curl x",
      "su -c 'wget x' me",
      "echo 'curl x' | bash",
      "trap 'curl x' EXIT",
      "exec 3<>/dev/tcp/example.com/80",
      "echo '$(curl x)'; echo ${_@P}",
    ];
    for (const command of disguises) {
      const refused = await gaggle.failure("Bash", { command });
      expect({ command, code: refused.code }).toEqual({ command, code: "PERMISSION_DENIED" });
    }
    expect((await gaggle.failure("Bash", { command: "sudo curl x" })).error).toBe('the command runs curl (in "sudo curl x"), which Bash refuses');
    expect(await gaggle.bash("echo curl wget; command -v curl >/dev/null || echo none; echo 'curl x' | grep -c curl")).toMatch(/^curl wget\n/);
  });
});

describe("Bash under a policy", () => {
  it("runs only what [virtual.workspace.policy] allows, in the shell's working directory", async () => {
    const root = scratch();
    const gaggle = await workspaceGaggle(
      root,
      `[virtual.workspace.policy]\nallow = ["echo *", "cd *", "pwd"]\ncwd_allow = [${JSON.stringify(root)}]\n`,
    );
    try {
      expect(await gaggle.bash("echo allowed && pwd")).toBe(`allowed\n${root}\n`);
      expect(await gaggle.failure("Bash", { command: "ls" })).toMatchObject({
        code: "PERMISSION_DENIED",
        error: expect.stringContaining('segment "ls"'),
      });
      expect(await gaggle.failure("Bash", { command: "echo '$(touch X)'; echo ${_@P}" })).toMatchObject({
        code: "PERMISSION_DENIED",
        error: expect.stringContaining("prompt expansion"),
      });
      expect(existsSync(join(root, "X"))).toBe(false);
      // A cd out of cwd_allow is refused, and so is what would follow it in the same line.
      const outside = scratch();
      expect(await gaggle.failure("Bash", { command: `cd ${outside} && echo x > f` })).toMatchObject({
        code: "PERMISSION_DENIED",
        error: expect.stringContaining(`"cd ${outside}" may leave the shell in ${outside}`),
      });
      expect(await gaggle.failure("Bash", { command: `pushd ${outside}` })).toMatchObject({ code: "PERMISSION_DENIED" });
      expect(existsSync(join(outside, "f"))).toBe(false);
      // A shell whose folder is swapped for a symlink to / behind its back: its next command is refused there.
      mkdirSync(join(root, "sub"));
      await gaggle.bash("cd sub");
      renameSync(join(root, "sub"), join(outside, "sub"));
      symlinkSync("/", join(root, "sub"));
      expect(await gaggle.failure("Bash", { command: "echo hi" })).toMatchObject({
        code: "PERMISSION_DENIED",
        error: expect.stringContaining('cwd "/"'),
      });
    } finally {
      await gaggle.close();
    }
  });
});

describe("a session's shell", () => {
  /** Every process a test's gaggle starts carries this mark, so the clean-up finds what the test left. */
  let mark = "";
  let http: HttpGaggle | undefined;
  let stdio: RunningGaggle | undefined;
  const marked = () => {
    mark = `GAGGLE_TEST_MARK=${randomUUID()}`;
    const [name, value] = mark.split("=") as [string, string];
    return { [name]: value };
  };
  afterEach(async () => {
    await http?.stop();
    await stdio?.close().catch(() => {});
    killCarrying(mark);
    http = stdio = undefined;
  });

  /** The shell's pid, and two processes a command left running: one in its group, one that left it (setsid). */
  async function leaveRunning(tools: Tools, dir: string): Promise<number[]> {
    const file = join(dir, `setsid-${randomUUID()}`);
    const out = await tools.bash(`echo $$; sleep 311 > /dev/null 2>&1 & echo $!; ${setsidSleep(file)}`);
    const pids = [...out.trim().split("\n").map(Number), await pidIn(file)];
    expect(pids.every(isAlive)).toBe(true);
    return pids;
  }

  it("is each client session's own, and ends with its session, with everything its commands left running", async () => {
    const root = scratch();
    mkdirSync(join(root, "sub"));
    writeFileSync(join(root, "sub", "inner"), "x");
    http = await startHttpGaggle(workspaceConfig(root), { env: marked() });
    const annClient = await http.connect();
    const [ann, bob] = [toolsOf(annClient), toolsOf(await http.connect())];
    await ann.bash("cd sub && export WHO=ann");
    expect(await bob.bash('pwd; echo "[$WHO]"')).toBe(`${root}\n[]\n`);
    // Relative paths of the file tools start where the session's shell is.
    expect(await ann.text("LS", { path: "." })).toBe(`- ${root}/sub/\n  - inner`);
    expect(await bob.text("LS", { path: "." })).toBe(`- ${root}/\n  - sub/`);
    const annPids = await leaveRunning(ann, root);
    const bobPids = await leaveRunning(bob, root);
    expect(annPids[0]).not.toBe(bobPids[0]);
    await httpTransportOf(annClient).terminateSession();
    expect(await waitGone(annPids)).toEqual([]);
    expect(bobPids.every(isAlive)).toBe(true);
    expect(await bob.bash("echo alive")).toBe("alive\n");
  });

  it("kills every process the session's commands started once they run more than max_processes at once", async () => {
    const root = scratch();
    stdio = await workspaceGaggle(root, "max_processes = 20\nkill_grace_ms = 300\n", { env: marked() });
    const tools = toolsOf(stdio.client);
    // Left running by an earlier command: it counts toward the cap, and ends with the rest.
    const earlier = Number(await tools.bash("sleep 317 > /dev/null 2>&1 & echo $!"));
    const stopped = await tools.failure("Bash", { command: "for i in $(seq 60); do sleep 318 & done; wait", timeout: 60_000 });
    expect(stopped.code).toBe("LIMIT_REACHED");
    expect(stopped.error).toMatch(/^this session's commands ran \d+ processes at once, past the cap of 20 \(\[virtual\.workspace\] max_processes\)/);
    expect(stopped.hint).toBe("run fewer processes at once, or raise [virtual.workspace] max_processes");
    expect(await waitGone([earlier])).toEqual([]);
    expect(carrying(mark).filter((pid) => /^sleep 31[78]/.test(commandLine(pid)))).toEqual([]);
    // A command that ends at once, leaving too many behind, is caught as it ends; the shell goes on.
    expect((await tools.failure("Bash", { command: "for i in $(seq 30); do sleep 319 & done" })).code).toBe("LIMIT_REACHED");
    expect(carrying(mark).filter((pid) => commandLine(pid).startsWith("sleep 319"))).toEqual([]);
    expect(await tools.bash("echo still here")).toBe("still here\n");
  });

  it("ends a job that cleared its environment (env -i) with its session, and another session's with gaggle", async () => {
    const root = scratch();
    http = await startHttpGaggle(workspaceConfig(root), { env: marked() });
    const annClient = await http.connect();
    const [ann, bob] = [toolsOf(annClient), toolsOf(await http.connect())];
    const cleared = "env -i sleep 314 > /dev/null 2>&1 & echo $!";
    // Commands that end at once, each leaving a job: each one's group is known when its command ends, however the
    // shell's output and its job notices were read.
    const annJobs: number[] = [];
    for (let command = 0; command < 10; command++) annJobs.push(Number(await ann.bash(cleared)));
    const bobJob = Number(await bob.bash(cleared));
    try {
      expect([...annJobs, bobJob].every(isAlive)).toBe(true);
      await httpTransportOf(annClient).terminateSession();
      expect(await waitGone(annJobs)).toEqual([]);
      expect(isAlive(bobJob)).toBe(true);
      process.kill(http.pid, "SIGKILL");
      expect(await waitGone([bobJob])).toEqual([]);
    } finally {
      for (const pid of [...annJobs, bobJob].filter(isAlive)) process.kill(pid, "SIGKILL");
    }
  });

  for (const how of ["its stdin closes", "it gets SIGKILL"] as const) {
    it(`keeps the shell's variables in a folder only its user may enter, gone when gaggle ends (${how})`, async () => {
      const root = scratch();
      const tmp = scratch("gaggle-tmpdir-");
      const gaggle = await workspaceGaggle(root, "", { env: { ...marked(), TMPDIR: tmp } });
      stdio = gaggle;
      await gaggle.bash("export SECRET=kept-in-the-folder");
      const folders = readdirSync(tmp).filter((name) => name.startsWith("gaggle-shell-"));
      expect(folders).toHaveLength(1);
      expect(statSync(join(tmp, folders[0]!)).mode & 0o777).toBe(0o700);
      expect(readFileSync(join(tmp, folders[0]!, "state"), "utf8")).toContain("kept-in-the-folder");
      if (how === "it gets SIGKILL") process.kill(stdio.pid, "SIGKILL");
      else await stdio.close();
      expect(await waitGone([stdio.pid])).toEqual([]);
      await until(
        () => readdirSync(tmp).filter((name) => name.startsWith("gaggle-shell-")),
        (names) => names.length === 0,
      );
    });

    it(`leaves nothing running when gaggle ends (${how})`, async () => {
      const root = scratch();
      stdio = await workspaceGaggle(root, "", { env: marked() });
      const pids = await leaveRunning(toolsOf(stdio.client), root);
      if (how === "it gets SIGKILL") process.kill(stdio.pid, "SIGKILL");
      else await stdio.close();
      expect(await waitGone([stdio.pid, ...pids])).toEqual([]);
      expect(await waitGone(carrying(mark))).toEqual([]);
    });
  }
});

/** A sleep in a session of its own (out of the command's process group), which writes its pid to `file`. */
function setsidSleep(file: string): string {
  return `setsid sh -c 'echo $$ > ${file}.part && mv ${file}.part ${file} && exec sleep 312' < /dev/null > /dev/null 2>&1 & `;
}

async function pidIn(file: string): Promise<number> {
  const text = await until(
    () => {
      try {
        return readFileSync(file, "utf8");
      } catch {
        return "";
      }
    },
    (read) => read !== "",
  );
  return Number(text);
}

/** The command line of `pid`, its arguments joined by spaces; empty once it is gone. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}
