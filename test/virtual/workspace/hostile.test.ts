// The file tools against hostile trees, through a real gaggle over HTTP with two clients: a folder swapped for a
// symlink while the tools run, hard links out of the roots, FIFOs, a line of hundreds of megabytes, and patterns
// that backtrack; one client's hostile call never keeps the other's from being answered.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync, ftruncateSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { scratch, toolsOf, workspaceConfig, type Tools } from "./helpers.js";

let base: string;
let root: string;
let outside: string;
let http: HttpGaggle;
let ann: Tools;
let bob: Tools;
beforeAll(async () => {
  base = scratch("gaggle-hostile-");
  root = join(base, "root");
  outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  http = await startHttpGaggle(workspaceConfig(root, "ripgrep = false\nmax_results = 5\n"));
  ann = toolsOf(await http.connect());
  bob = toolsOf(await http.connect());
});
afterAll(() => http.stop());

/** Which of `calls` settles first: the hostile one, or the other client's. */
async function firstOf(hostile: Promise<unknown>, other: Promise<unknown>): Promise<"hostile" | "other"> {
  const winner = await Promise.race([hostile.then(() => "hostile" as const), other.then(() => "other" as const)]);
  await Promise.allSettled([hostile, other]);
  return winner;
}

describe("a folder swapped for a symlink while the file tools run", () => {
  it("never lets View read, LS list or Replace write outside the roots", async () => {
    const secret = "OUTSIDE-SECRET";
    mkdirSync(join(outside, "swap"));
    writeFileSync(join(outside, "swap", "f.txt"), `${secret}\n`);
    writeFileSync(join(outside, "swap", `${secret}.name`), "");
    mkdirSync(join(root, "swap"));
    writeFileSync(join(root, "swap", "f.txt"), "inside\n");
    symlinkSync(join(outside, "swap"), join(root, "out.link"));
    // A loop that swaps the folder root/swap for a symlink out of the roots and back, as fast as it can.
    const swapper = spawn("sh", ["-c", "while :; do mv -T swap real.tmp; mv -T out.link swap; mv -T swap out.link; mv -T real.tmp swap; done"], {
      cwd: root,
      stdio: "ignore",
    });
    const escapes: string[] = [];
    try {
      for (let round = 0; round < 100; round++) {
        const [view, list, write] = await Promise.all([
          ann.call("View", { file_path: join(root, "swap", "f.txt") }),
          bob.call("LS", { path: join(root, "swap") }),
          ann.call("Replace", { file_path: join(root, "swap", "f.txt"), content: "inside\n" }),
        ]);
        for (const [tool, result] of [
          ["View", view],
          ["LS", list],
          ["Replace", write],
        ] as const) {
          const text = JSON.stringify(result.content);
          if (text.includes(secret)) escapes.push(`${tool}: ${text.slice(0, 200)}`);
        }
        if (readFileSync(join(outside, "swap", "f.txt"), "utf8") !== `${secret}\n`) escapes.push("Replace wrote outside");
        writeFileSync(join(outside, "swap", "f.txt"), `${secret}\n`);
      }
    } finally {
      swapper.kill("SIGKILL");
    }
    expect(escapes).toEqual([]);
  });
});

describe("hard links", () => {
  it("refuses Edit and Replace on a file with another link, which may lie outside the roots; View still reads it", async () => {
    const target = join(outside, "linked.txt");
    writeFileSync(target, "outside content\n");
    linkSync(target, join(root, "linked.txt"));
    for (const [tool, args] of [
      ["Replace", { file_path: join(root, "linked.txt"), content: "changed\n" }],
      ["Edit", { file_path: join(root, "linked.txt"), old_string: "outside", new_string: "changed" }],
    ] as const) {
      expect(await ann.failure(tool, args)).toMatchObject({
        code: "PERMISSION_DENIED",
        error: `${join(root, "linked.txt")} has 2 hard links, and Edit and Replace do not write through hard links`,
      });
    }
    expect(readFileSync(target, "utf8")).toBe("outside content\n");
    expect(await ann.text("View", { file_path: join(root, "linked.txt") })).toBe("     1\toutside content");
  });
});

describe("FIFOs", () => {
  it("refuses to View a FIFO, and answers the other client meanwhile", async () => {
    const fifo = join(root, "pipe");
    spawnSync("mkfifo", [fifo]);
    expect(await ann.failure("View", { file_path: fifo })).toMatchObject({
      code: "INVALID_ARGS",
      error: `${fifo} is a FIFO: the file tools read and write only regular files`,
    });
    expect(await ann.failure("Replace", { file_path: fifo, content: "x" })).toMatchObject({ code: "INVALID_ARGS" });
    rmSync(fifo);
  });

  it("reads no .gitignore that is a FIFO, and none from a folder above the roots", async () => {
    // Above the roots: a FIFO (which would block whoever reads it) and a rule that would hide every file.
    const above = scratch("gaggle-above-");
    const inner = join(above, "inner");
    mkdirSync(join(inner, "sub"), { recursive: true });
    writeFileSync(join(inner, "sub", "seen.txt"), "needle\n");
    spawnSync("mkfifo", [join(above, ".gitignore")]);
    const own = await startHttpGaggle(workspaceConfig(inner, "ripgrep = false\n"));
    try {
      const tools = toolsOf(await own.connect());
      spawnSync("mkfifo", [join(inner, "sub", ".gitignore")]);
      expect(await tools.text("GlobTool", { pattern: "**/*.txt" })).toContain("sub/seen.txt");
      expect(await tools.text("GrepTool", { pattern: "needle", path: "sub" })).toContain("seen.txt:1:needle");
      rmSync(join(above, ".gitignore"));
      writeFileSync(join(above, ".gitignore"), "*\n");
      expect(await tools.text("GlobTool", { pattern: "**/*.txt" })).toContain("sub/seen.txt");
    } finally {
      await own.stop();
    }
  });
});

describe("a line of hundreds of megabytes", () => {
  it("is cut as View reads it: the answer comes, gaggle lives, and memory stays bounded", async () => {
    // Text for the first bytes View looks at, then a sparse run of NULs up to 600 MB, all one line.
    const path = join(root, "huge.txt");
    const fd = openSync(path, "w");
    writeSync(fd, Buffer.alloc(9000, "a"));
    ftruncateSync(fd, 600 * 1024 * 1024);
    writeSync(fd, "\nsecond line\n", 600 * 1024 * 1024);
    closeSync(fd);
    const [first, second] = (await ann.text("View", { file_path: path })).split("\n");
    expect(first).toBe(`     1\t${"a".repeat(2000)}... [line cut: ${600 * 1024 * 1024 - 2000} more characters]`);
    expect(second).toBe("     2\tsecond line");
    expect(await bob.text("View", { file_path: path, offset: 1 })).toBe("     2\tsecond line");
    const status = readFileSync(`/proc/${http.pid}/status`, "utf8");
    const peakKiB = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
    expect(peakKiB).toBeLessThan(400 * 1024);
    rmSync(path);
  });
});

describe("patterns that backtrack", () => {
  it("GlobTool matches **a**a**a**a**a**a**b against long names while the other client is answered", async () => {
    for (let folder = 0; folder < 300; folder++) {
      mkdirSync(join(root, "names", String(folder)), { recursive: true });
      for (let file = 0; file < 3; file++) writeFileSync(join(root, "names", String(folder), `${"a".repeat(70)}${file}`), "");
    }
    writeFileSync(join(root, "small.txt"), "small\n");
    const hostile = ann.text("GlobTool", { pattern: "**a**a**a**a**a**a**b", path: "names" });
    const other = bob.text("View", { file_path: join(root, "small.txt") });
    expect(await firstOf(hostile, other)).toBe("other");
    expect(await hostile).toBe(`No files under ${join(root, "names")} match **a**a**a**a**a**a**b`);
  });

  it("GrepTool's own search runs (a+)+$ in linear time while the other client is answered", async () => {
    writeFileSync(join(root, "as.txt"), `${"a".repeat(40)}!\n`.repeat(100_000));
    const hostile = ann.text("GrepTool", { pattern: "(a+)+$", include: "as.txt" });
    const other = bob.text("View", { file_path: join(root, "small.txt") });
    expect(await firstOf(hostile, other)).toBe("other");
    expect(await hostile).toBe(`No lines under ${root} match (a+)+$`);
  });

  it("a .gitignore line that backtracks is matched in linear time too", async () => {
    mkdirSync(join(root, "ignoring"));
    writeFileSync(join(root, "ignoring", ".gitignore"), "**a**a**a**a**a**a**b\n");
    for (let file = 0; file < 500; file++) writeFileSync(join(root, "ignoring", `${"a".repeat(70)}${file}.txt`), "");
    // A backtracking matcher would take minutes over each of these names; RE2's answer is the test's own time.
    expect(await ann.text("GlobTool", { pattern: "*.txt", path: "ignoring", limit: 1 })).toContain("500 files under");
  });
});
