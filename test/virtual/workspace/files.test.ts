// The file tools through a real gaggle: Edit's one exact match, Replace, View in cat -n form with images as
// images, LS; binary files refused with their type; FILE.bak backups with [virtual.workspace] backups.
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningGaggle } from "../../helpers/gaggle.js";
import { fileUnder, scratch, workspaceGaggle, type Tools } from "./helpers.js";

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");

let root: string;
let gaggle: RunningGaggle & Tools;
beforeAll(async () => {
  root = scratch();
  gaggle = await workspaceGaggle(root, "max_edit_bytes = 2000\nmax_image_bytes = 1000\nmax_results = 3\n");
});
afterAll(() => gaggle.close());

const file = (name: string, content: string | Buffer) => fileUnder(root, name, content);

describe("Edit", () => {
  it("shows no line past a final newline", async () => {
    const path = file("edit/end.txt", "a\nb\n");
    expect(await gaggle.text("Edit", { file_path: path, old_string: "b", new_string: "B" })).toBe(
      `Edited ${path}: line 2 became line 2.\n     1\ta\n     2\tB`,
    );
  });

  it("replaces old_string when it matches exactly once, and answers with the changed lines and their numbers", async () => {
    const path = file("edit/a.ts", "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n");
    chmodSync(path, 0o640);
    expect(await gaggle.text("Edit", { file_path: path, old_string: "four\nfive", new_string: "FOUR\n4.5\nFIVE" })).toBe(
      [
        `Edited ${path}: lines 4-5 became lines 4-6.`,
        "     1\tone",
        "     2\ttwo",
        "     3\tthree",
        "     4\tFOUR",
        "     5\t4.5",
        "     6\tFIVE",
        "     7\tsix",
        "     8\tseven",
        "     9\teight",
      ].join("\n"),
    );
    expect(readFileSync(path, "utf8")).toBe("one\ntwo\nthree\nFOUR\n4.5\nFIVE\nsix\nseven\neight\n");
    expect(statSync(path).mode & 0o777).toBe(0o640);
    expect(existsSync(`${path}.bak`)).toBe(false); // backups are off unless configured
  });

  it("refuses an old_string that matches several times, listing the line of every match, and one that matches none", async () => {
    const path = file("edit/many.txt", "x = 1\ny = 2\nx = 1\n\nx = 1\n");
    expect(await gaggle.failure("Edit", { file_path: path, old_string: "x = 1", new_string: "x = 2" })).toMatchObject({
      code: "INVALID_ARGS",
      error: `old_string occurs 3 times in ${path}, starting at lines 1, 3, 5`,
      hint: expect.stringContaining("add surrounding lines"),
    });
    expect(await gaggle.failure("Edit", { file_path: path, old_string: "z = 3", new_string: "" })).toMatchObject({
      code: "INVALID_ARGS",
      error: `old_string was not found in ${path}`,
    });
    expect(readFileSync(path, "utf8")).toBe("x = 1\ny = 2\nx = 1\n\nx = 1\n");
  });

  it("creates a new file (and its folders) for an empty old_string, and refuses to when the file exists", async () => {
    expect(await gaggle.text("Edit", { file_path: "new/deep/file.md", old_string: "", new_string: "# Title\nbody\n" })).toBe(
      `Created ${root}/new/deep/file.md (2 lines)`,
    );
    expect(readFileSync(join(root, "new/deep/file.md"), "utf8")).toBe("# Title\nbody\n");
    expect(await gaggle.failure("Edit", { file_path: "new/deep/file.md", old_string: "", new_string: "again" })).toMatchObject({
      code: "INVALID_ARGS",
      error: `${root}/new/deep/file.md already exists, and an empty old_string only creates a new file`,
    });
  });

  it("refuses binary files, saying what they are, and files over max_edit_bytes", async () => {
    const binary = file("edit/prog", Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0]));
    expect(await gaggle.failure("Edit", { file_path: binary, old_string: "E", new_string: "e" })).toMatchObject({
      code: "INVALID_ARGS",
      error: `${binary} is a binary file (ELF executable or library), which Edit does not change`,
    });
    const nul = file("edit/data.bin", Buffer.from("text\0more"));
    expect((await gaggle.failure("Edit", { file_path: nul, old_string: "text", new_string: "t" })).error).toContain(
      "binary data (it holds NUL bytes)",
    );
    const big = file("edit/big.txt", "a".repeat(2001));
    expect(await gaggle.failure("Edit", { file_path: big, old_string: "a", new_string: "b" })).toMatchObject({
      code: "LIMIT_REACHED",
      error: `${big} has 2001 bytes, over 2000 ([virtual.workspace] max_edit_bytes)`,
    });
  });
});

describe("Replace", () => {
  it("writes a whole file, saying whether it created or replaced it", async () => {
    expect(await gaggle.text("Replace", { file_path: "replace/out.txt", content: "a\nb\n" })).toBe(`Created ${root}/replace/out.txt (2 lines)`);
    expect(await gaggle.text("Replace", { file_path: "replace/out.txt", content: "c" })).toBe(`Replaced ${root}/replace/out.txt: 1 lines (it had 2)`);
    expect(readFileSync(join(root, "replace/out.txt"), "utf8")).toBe("c");
  });
});

describe("backups", () => {
  let home: string;
  let backing: RunningGaggle & Tools;
  beforeAll(async () => {
    home = scratch();
    backing = await workspaceGaggle(home, "backups = true\n");
  });
  afterAll(() => backing.close());

  it("copies a file Edit or Replace changes to FILE.bak first, with its mode, replacing an older .bak (not writing into its hard links)", async () => {
    const path = join(home, "a.txt");
    writeFileSync(path, "one\ntwo");
    chmodSync(path, 0o640);
    const other = join(home, "other.txt");
    writeFileSync(other, "another file\n");
    linkSync(other, `${path}.bak`);
    expect(await backing.text("Edit", { file_path: path, old_string: "two", new_string: "2" })).toBe(
      `Edited ${path}: line 2 became line 2.\n     1\tone\n     2\t2\n[backup: ${path}.bak]`,
    );
    expect(readFileSync(`${path}.bak`, "utf8")).toBe("one\ntwo");
    expect(statSync(`${path}.bak`).mode & 0o777).toBe(0o640);
    expect(readFileSync(other, "utf8")).toBe("another file\n");
    expect(await backing.text("Replace", { file_path: "a.txt", content: "three\n" })).toBe(
      `Replaced ${path}: 1 lines (it had 2)\n[backup: ${path}.bak]`,
    );
    expect(readFileSync(`${path}.bak`, "utf8")).toBe("one\n2");
  });

  it("writes none for a new file, and leaves a FILE.bak that is a symlink or a folder alone, saying so", async () => {
    expect(await backing.text("Replace", { file_path: "new.txt", content: "x" })).toBe(`Created ${home}/new.txt (1 lines)`);
    expect(await backing.text("Edit", { file_path: "new2.txt", old_string: "", new_string: "y" })).toBe(`Created ${home}/new2.txt (1 lines)`);
    expect(existsSync(join(home, "new.txt.bak")) || existsSync(join(home, "new2.txt.bak"))).toBe(false);
    const outside = join(scratch(), "target.txt");
    writeFileSync(outside, "outside\n");
    symlinkSync(outside, join(home, "new.txt.bak"));
    expect(await backing.text("Replace", { file_path: "new.txt", content: "z" })).toBe(
      `Replaced ${home}/new.txt: 1 lines (it had 1)\n[no backup: ${home}/new.txt.bak is a symlink, which is left alone]`,
    );
    expect(readFileSync(outside, "utf8")).toBe("outside\n");
    expect(readFileSync(join(home, "new.txt"), "utf8")).toBe("z");
    mkdirSync(join(home, "new2.txt.bak"));
    expect(await backing.text("Replace", { file_path: "new2.txt", content: "w" })).toContain(
      `\n[no backup: ${home}/new2.txt.bak is not a regular file, which is left alone]`,
    );
  });
});

describe("View", () => {
  const lines = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`);
  beforeAll(() => file("view/long.txt", `${lines.join("\n")}\n`));

  it("shows a text file as cat -n does, 2000 lines from the start, saying where to read on", async () => {
    const text = await gaggle.text("View", { file_path: "view/long.txt" });
    const shown = text.split("\n");
    expect(shown[0]).toBe("     1\tline 1");
    expect(shown[1999]).toBe("  2000\tline 2000");
    expect(shown[2000]).toBe("[lines 1-2000 shown; more follow: pass offset 2000 to read on]");
  });

  it("starts after offset lines and reads limit lines; an offset past the end is refused", async () => {
    expect(await gaggle.text("View", { file_path: "view/long.txt", offset: 2497, limit: 10 })).toBe(
      "  2498\tline 2498\n  2499\tline 2499\n  2500\tline 2500",
    );
    expect(await gaggle.text("View", { file_path: "view/long.txt", offset: 10, limit: 2 })).toBe(
      "    11\tline 11\n    12\tline 12\n[lines 11-12 shown; more follow: pass offset 12 to read on]",
    );
    expect(await gaggle.failure("View", { file_path: "view/long.txt", offset: 2500 })).toMatchObject({
      code: "INVALID_ARGS",
      error: `offset 2500 is past the end of ${root}/view/long.txt, which has 2500 lines`,
    });
  });

  it("cuts lines past 2000 characters, and says so of an empty file", async () => {
    file("view/wide.txt", `${"w".repeat(2500)}\nshort\n`);
    expect(await gaggle.text("View", { file_path: "view/wide.txt" })).toBe(
      `     1\t${"w".repeat(2000)}... [line cut: 500 more characters]\n     2\tshort`,
    );
    file("view/empty.txt", "");
    expect(await gaggle.text("View", { file_path: "view/empty.txt" })).toBe("(empty file)");
  });

  it("returns an image as MCP image content, and refuses one over max_image_bytes", async () => {
    const path = file("view/dot.png", PNG);
    const result = (await gaggle.call("View", { file_path: path })) as CallToolResult;
    expect(result.content).toEqual([
      { type: "text", text: `${path} (image/png, ${PNG.length} bytes)` },
      { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
    ]);
    const big = file("view/big.png", Buffer.concat([PNG, Buffer.alloc(1000)]));
    expect((await gaggle.failure("View", { file_path: big })).code).toBe("LIMIT_REACHED");
  });

  it("refuses a binary file with its type, and a folder", async () => {
    const pdf = file("view/doc.pdf", Buffer.from("%PDF-1.7\n\0binary"));
    expect(await gaggle.failure("View", { file_path: pdf })).toMatchObject({
      code: "INVALID_ARGS",
      error: `${pdf} is a binary file (PDF document, 16 bytes): View shows text and images`,
    });
    expect(await gaggle.failure("View", { file_path: "view" })).toMatchObject({
      code: "INVALID_ARGS",
      error: `${root}/view is a folder, not a file`,
    });
    expect((await gaggle.failure("View", { file_path: "view/missing.txt" })).code).toBe("NOT_FOUND");
  });
});

describe("LS", () => {
  it("lists folders first, then files, symlinks with their targets, leaving out what ignore names", async () => {
    file("ls/b.txt", "");
    file("ls/a.log", "");
    file("ls/zdir/inner", "");
    symlinkSync("b.txt", join(root, "ls", "link"));
    expect(await gaggle.text("LS", { path: "ls", ignore: ["*.log"] })).toBe(`- ${root}/ls/\n  - zdir/\n  - b.txt\n  - link -> b.txt`);
    expect(await gaggle.text("LS", { path: `${root}/ls`, ignore_pattern: "z*" })).toBe(`- ${root}/ls/\n  - a.log\n  - b.txt\n  - link -> b.txt`);
  });

  it("lists at most max_results entries, saying how many more there are", async () => {
    for (const name of ["1", "2", "3", "4", "5"]) file(`many/${name}`, "");
    expect(await gaggle.text("LS", { path: "many" })).toBe(
      `- ${root}/many/\n  - 1\n  - 2\n  - 3\n[2 more entries not shown ([virtual.workspace] max_results = 3); list a subfolder or ignore some]`,
    );
  });
});
