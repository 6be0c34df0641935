// GlobTool and GrepTool through a real gaggle: .gitignore files honoured (outside git too), hidden and binary files
// skipped, newest first, capped with a note; GrepTool alike with ripgrep and with its JavaScript search.
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findExecutable } from "../../../src/shared/fs-checks.js";
import { readIgnoreFile, rulesFor } from "../../../src/virtual/workspace/gitignore.js";
import { withRipgrep } from "../../../src/virtual/workspace/grep-tool.js";
import type { RunningGaggle } from "../../helpers/gaggle.js";
import { scratch, workspaceGaggle, type Tools } from "./helpers.js";

const RG = findExecutable("rg", "/", process.env.PATH);

/** A tree with ignored, re-included, hidden and binary files; `age` seconds before now for each file. */
function tree(): string {
  const root = scratch();
  const files: Array<[string, string | Buffer, number]> = [
    [".gitignore", "build/\n*.log\n!keep.log\n# a comment\n", 100],
    ["src/a.ts", "const needle = 1;\nother\n", 50],
    ["src/b.ts", "// needle here\nneedle again\n", 10],
    ["src/deep/c.ts", "NEEDLE in capitals\n", 30],
    ["src/deep/c.test.ts", "a needle test\n", 40],
    ["build/out.ts", "needle built\n", 5],
    ["x.log", "needle logged\n", 5],
    ["keep.log", "needle kept\n", 20],
    [".hidden/h.ts", "needle hidden\n", 5],
    ["bin.dat", Buffer.from("\0\0needle in binary\n"), 5],
    ["sub/.gitignore", "local.ts\n", 100],
    ["sub/local.ts", "needle local\n", 5],
    ["sub/kept.ts", "needle sub\n", 60],
    [".git/config", "[core]\n\tvcsword = true\n", 5],
    ["sub/.svn/entries", "vcsword\n", 6],
    [".hidden/vcs.txt", "vcsword hidden\n", 5],
    ["ctx/ctx.txt", "alpha\nctxword one\nbeta\ngamma\ndelta\nepsilon\nctxword two\nctxword three\nzeta\n", 1],
    ["ctx/other.txt", "x\nctxword four\n", 2],
    ["ctx/many.txt", Array.from({ length: 8 }, (_, i) => `hit ${i + 1}\ngap`).join("\n"), 3],
  ];
  const now = Date.now() / 1000;
  for (const [name, content, age] of files) {
    const path = join(root, name);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, content);
    utimesSync(path, now - age, now - age);
  }
  return root;
}

describe("GlobTool", () => {
  let root: string;
  let gaggle: RunningGaggle & Tools;
  beforeAll(async () => {
    root = tree();
    gaggle = await workspaceGaggle(root, "max_results = 4\n");
  });
  afterAll(() => gaggle.close());

  const paths = (text: string) =>
    text
      .split("\n")
      .slice(1)
      .filter((line) => !line.startsWith("["))
      .map((line) => line.replace(/ \(.*\)$/, ""));

  it("lists matching files newest first, with size, modification time and permissions, honouring .gitignore", async () => {
    const text = await gaggle.text("GlobTool", { pattern: "**/*.ts", limit: 3 });
    expect(text.split("\n")[0]).toBe(`5 files under ${root} match **/*.ts, newest first:`);
    expect(paths(text)).toEqual(["src/b.ts", "src/deep/c.ts", "src/deep/c.test.ts"]);
    expect(text.split("\n")[1]).toMatch(/^src\/b\.ts \(28 B, modified \d{4}-\d\d-\d\d \d\d:\d\d:\d\d, -rw-r--r--\)$/);
    expect(text).toContain("[2 more files matched; narrow the pattern or path, or raise limit (at most 4)]");
  });

  it("takes exclude, a path, a pattern of the folder itself, and absolute paths", async () => {
    expect(paths(await gaggle.text("GlobTool", { pattern: "**/*.ts", exclude: "**/*.test.ts", path: "src" }))).toEqual(["b.ts", "deep/c.ts", "a.ts"]);
    expect(paths(await gaggle.text("GlobTool", { pattern: "*.log" }))).toEqual(["keep.log"]);
    expect(paths(await gaggle.text("GlobTool", { pattern: "src/*.{ts,js}", absolute: true }))).toEqual([
      join(root, "src/b.ts"),
      join(root, "src/a.ts"),
    ]);
    expect(await gaggle.text("GlobTool", { pattern: "**/*.py" })).toBe(`No files under ${root} match **/*.py`);
  });
});

for (const engine of ["ripgrep", "JavaScript"] as const) {
  describe.skipIf(engine === "ripgrep" && !("found" in RG))(`GrepTool with ${engine}`, () => {
    let root: string;
    let gaggle: RunningGaggle & Tools;
    beforeAll(async () => {
      root = tree();
      gaggle = await workspaceGaggle(root, `max_results = 6\nripgrep = ${engine === "ripgrep"}\n`);
    });
    afterAll(() => gaggle.close());

    it("answers file:line:text, newest files first, skipping ignored, hidden and binary files", async () => {
      expect(await gaggle.text("GrepTool", { pattern: "needle" })).toBe(
        [
          `6 matching lines in 5 files under ${root}:`,
          "src/b.ts:1:// needle here",
          "src/b.ts:2:needle again",
          "keep.log:1:needle kept",
          "src/deep/c.test.ts:1:a needle test",
          "src/a.ts:1:const needle = 1;",
          "sub/kept.ts:1:needle sub",
        ].join("\n"),
      );
    });

    it("stops at max_results lines, saying more matched", async () => {
      const lines = (await gaggle.text("GrepTool", { pattern: "e" })).split("\n");
      expect(lines[0]).toMatch(/^6\+ matching lines in \d files under /);
      expect(lines.slice(1, -1)).toHaveLength(6);
      expect(lines.at(-1)).toBe("[more lines matched past the first 6 ([virtual.workspace] max_results); narrow the pattern, path or include]");
    });

    it("takes include, a path and ignore_case; says when nothing matches, and refuses a pattern that is no regex", async () => {
      expect(await gaggle.text("GrepTool", { pattern: "needle", path: "sub", include: "*.ts" })).toBe(
        `1 matching lines in 1 files under ${root}/sub:\nkept.ts:1:needle sub`,
      );
      expect(await gaggle.text("GrepTool", { pattern: "needle\\s+in", ignore_case: true, include: "*.{ts,js}" })).toBe(
        `1 matching lines in 1 files under ${root}:\nsrc/deep/c.ts:1:NEEDLE in capitals`,
      );
      expect(await gaggle.text("GrepTool", { pattern: "haystack" })).toBe(`No lines under ${root} match haystack`);
      expect((await gaggle.failure("GrepTool", { pattern: "(unclosed" })).code).toBe("INVALID_ARGS");
    });

    it("shows context lines around matches as grep -C does: file-line-text, -- between groups that do not touch", async () => {
      expect(await gaggle.text("GrepTool", { pattern: "ctxword", path: "ctx", context: 1 })).toBe(
        [
          `4 matching lines in 2 files under ${root}/ctx:`,
          "ctx.txt-1-alpha",
          "ctx.txt:2:ctxword one",
          "ctx.txt-3-beta",
          "--",
          "ctx.txt-6-epsilon",
          "ctx.txt:7:ctxword two",
          "ctx.txt:8:ctxword three",
          "ctx.txt-9-zeta",
          "--",
          "other.txt-1-x",
          "other.txt:2:ctxword four",
        ].join("\n"),
      );
      const touching = await gaggle.text("GrepTool", { pattern: "ctxword", path: "ctx", include: "ctx.txt", context: 2 });
      expect(touching.split("\n").slice(1)).toEqual([
        "ctx.txt-1-alpha",
        "ctx.txt:2:ctxword one",
        "ctx.txt-3-beta",
        "ctx.txt-4-gamma",
        "ctx.txt-5-delta",
        "ctx.txt-6-epsilon",
        "ctx.txt:7:ctxword two",
        "ctx.txt:8:ctxword three",
        "ctx.txt-9-zeta",
      ]);
    });

    it("counts only matching lines against max_results when it shows context", async () => {
      const lines = (await gaggle.text("GrepTool", { pattern: "^hit", path: "ctx", context: 1 })).split("\n");
      expect(lines[0]).toBe(`6+ matching lines in 1 files under ${root}/ctx:`);
      expect(lines.slice(1, -1)).toEqual([1, 2, 3, 4, 5, 6].flatMap((n) => [`many.txt:${2 * n - 1}:hit ${n}`, `many.txt-${2 * n}-gap`]));
      expect(lines.at(-1)).toMatch(/^\[more lines matched past the first 6 /);
    });

    it("searches version-control folders (.git, .svn, .hg) only with no_ignore_vcs, other hidden folders never", async () => {
      expect(await gaggle.text("GrepTool", { pattern: "vcsword" })).toBe(`No lines under ${root} match vcsword`);
      expect(await gaggle.text("GrepTool", { pattern: "vcsword", no_ignore_vcs: true })).toBe(
        `2 matching lines in 2 files under ${root}:\n.git/config:2:\tvcsword = true\nsub/.svn/entries:1:vcsword`,
      );
    });
  });
}

describe("GrepTool's ripgrep failing beside what it found", () => {
  it("says what ripgrep reported (exit status 2) with the answer, instead of taking it for no match", async () => {
    const dir = scratch();
    const rg = join(dir, "rg");
    // A ripgrep that finds one line and cannot read a folder, as the real one does with a folder it may not open.
    writeFileSync(rg, "#!/bin/sh\nprintf './a.txt\\0001:needle\\n'\necho 'rg: ./locked: Permission denied (os error 13)' >&2\nexit 2\n", {
      mode: 0o755,
    });
    const search = {
      pattern: "needle",
      ignoreCase: false,
      include: undefined,
      dir,
      max: 10,
      context: 0,
      vcs: false,
      signal: undefined,
      inside: () => true,
    };
    await expect(withRipgrep(rg, search)).resolves.toEqual({
      matches: [{ file: "a.txt", line: 1, text: "needle" }],
      more: false,
      problems: "rg: ./locked: Permission denied (os error 13)",
    });
  });
});

describe("a parent's .gitignore handed to ripgrep", () => {
  it("rewrites its rules for the search folder: unanchored as they are, anchored ones stripped of the way down, others dropped", async () => {
    const dir = scratch();
    writeFileSync(join(dir, ".gitignore"), "*.log\n/sub/skip.txt\n/other/x\nsub/**/deep/\n!/sub/keep.log\n**/gen/*.ts\n/s*b/glob.txt\n");
    const file = (await readIgnoreFile(dir))!;
    expect(rulesFor(file, join(dir, "sub"))).toEqual(["*.log", "/skip.txt", "/**/deep/", "!/keep.log", "/**/gen/*.ts", "/glob.txt"]);
  });

  it.skipIf(!("found" in RG))("applies the parents' rules under the roots when ripgrep searches a subfolder", async () => {
    const dir = scratch();
    writeFileSync(join(dir, ".gitignore"), "*.log\n/sub/skip.txt\n");
    mkdirSync(join(dir, "sub"));
    for (const name of ["skip.txt", "seen.txt", "x.log"]) writeFileSync(join(dir, "sub", name), "needle\n");
    const search = {
      pattern: "needle",
      ignoreCase: false,
      include: undefined,
      dir: join(dir, "sub"),
      max: 10,
      context: 0,
      vcs: false,
      signal: undefined,
    };
    const found = await withRipgrep((RG as { found: string }).found, { ...search, inside: () => true });
    expect(found.matches.map((match) => match.file)).toEqual(["seen.txt"]);
    const outsideRoots = await withRipgrep((RG as { found: string }).found, { ...search, inside: (real) => real.startsWith(join(dir, "sub")) });
    expect(outsideRoots.matches.map((match) => match.file).sort()).toEqual(["seen.txt", "skip.txt", "x.log"]);
  });
});
