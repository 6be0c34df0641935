// View's further options: plain lines, the metadata header, hex dumps of binary files (checked against hexdump -C
// itself where it is installed) and find_section's rule, first on its own, then through a real gaggle.
import { execFileSync } from "node:child_process";
import { chmodSync, utimesSync } from "node:fs";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findExecutable } from "../../../src/shared/fs-checks.js";
import { hexDump } from "../../../src/virtual/workspace/hex-dump.js";
import { blockEnd, findSection } from "../../../src/virtual/workspace/section.js";
import type { RunningGaggle } from "../../helpers/gaggle.js";
import { fileUnder, scratch, workspaceGaggle, type Tools } from "./helpers.js";

const HEXDUMP = findExecutable("hexdump", "/", process.env.PATH);

const GUIDE = [
  "# Guide", // 1
  "",
  "Intro text.",
  "",
  "## Install", // 5
  "",
  "Run npm install.",
  "",
  "```sh",
  "# Not a heading", // 10
  "npm install gaggle",
  "```",
  "",
  "### From source",
  "", // 15
  "Clone it.",
  "",
  "## Usage",
  "",
  "Run it with a config file.", // 20
];

const SERVER = [
  'import { listen } from "./net";', // 1
  "",
  "// Starts the server.",
  "export function start(",
  "  port: number,", // 5
  "  host: string,",
  "): Server {",
  "  const server = listen(port, host);",
  "",
  '  server.on("error", (e) => {', // 10
  "    log(e);",
  "  });",
  "  return server;",
  "}",
  "", // 15
  "export const answer = 42;",
  "const other = 1;",
  "const more = 2;",
  "const last = 3;",
];

const PYTHON = [
  "import os",
  "",
  "class Tool:",
  "    def run(self):",
  '        if os.environ.get("X"):',
  "            return 1",
  "",
  "        return 0",
  "",
  "    def stop(self):",
  "        pass",
];

describe("hexDump", () => {
  const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(40), Buffer.from("abc\n\xff", "latin1")]);

  it("writes hexdump -C's lines: offset, two groups of eight bytes, characters; repeated lines as *, the length last", () => {
    expect(hexDump(elf).split("\n")).toEqual([
      "00000000  7f 45 4c 46 02 01 01 00  00 00 00 00 00 00 00 00  |.ELF............|",
      "00000010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|",
      "*",
      "00000030  61 62 63 0a ff                                    |abc..|",
      "00000035",
    ]);
    expect(hexDump(Buffer.from("abcdefghijklmnop"))).toBe("00000000  61 62 63 64 65 66 67 68  69 6a 6b 6c 6d 6e 6f 70  |abcdefghijklmnop|\n00000010");
    expect(hexDump(Buffer.alloc(0))).toBe("");
  });

  it("matches the real hexdump -C byte for byte, where it is installed", () => {
    const samples = [
      elf,
      Buffer.alloc(100),
      Buffer.from("0123456789abcdef".repeat(3) + "x"),
      Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256)),
    ];
    for (const bytes of samples) {
      const expected = "found" in HEXDUMP ? execFileSync(HEXDUMP.found, ["-C"], { input: bytes, encoding: "latin1" }) : undefined;
      if (expected !== undefined) expect(`${hexDump(bytes)}\n`).toBe(expected);
    }
    expect(hexDump(samples[1]!)).toBe(
      "00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n00000060  00 00 00 00                                       |....|\n00000064",
    );
  });
});

describe("findSection", () => {
  const section = (lines: string[], needle: string, from = 1, markdown = false) => findSection(lines, needle, from, markdown);

  it("in Markdown, takes the section whose heading holds the text, to the next heading of its level or higher", () => {
    expect(section(GUIDE, "INSTALL", 1, true)).toEqual({ start: 5, end: 16, what: 'the section headed "## Install"' });
    expect(section(GUIDE, "from source", 1, true)).toEqual({ start: 14, end: 16, what: 'the section headed "### From source"' });
    expect(section(GUIDE, "guide", 1, true)).toMatchObject({ start: 1, end: 20 });
  });

  it("in Markdown, takes the section holding the first line with the text when no heading has it; fenced # lines are no headings", () => {
    expect(section(GUIDE, "not a heading", 1, true)).toEqual({
      start: 5,
      end: 16,
      what: 'line 10 holds "not a heading", in the section headed "## Install"',
    });
    expect(section(GUIDE, "config file", 1, true)).toMatchObject({ start: 18, end: 20 });
    expect(section(GUIDE, "intro", 1, true)).toMatchObject({ start: 1, end: 20 });
  });

  it("elsewhere, takes the line with three lines before it and the block it opens, by brackets and indentation", () => {
    expect(section(SERVER, "function start")).toEqual({ start: 1, end: 14, what: 'line 4 holds "function start"; shown with the block it opens' });
    expect(section(SERVER, "server.on")).toMatchObject({ start: 7, end: 12 });
    expect(section(PYTHON, "def run")).toMatchObject({ start: 1, end: 8 });
    expect(section(["if [ -f x ]; then", "  echo yes", "fi", "echo after"], "if [")).toMatchObject({ start: 1, end: 3 });
  });

  it("gives a line that opens no block three lines after it too, and searches from the line it is given", () => {
    expect(section(SERVER, "ANSWER")).toEqual({ start: 13, end: 19, what: 'line 16 holds "ANSWER"; shown with the lines around it' });
    expect(section(SERVER, "const", 17)).toMatchObject({ start: 14, end: 19 });
    expect(section(SERVER, "answer", 17)).toBeUndefined();
    expect(section(SERVER, "nowhere")).toBeUndefined();
  });

  it("ends a block that never closes after 200 lines", () => {
    const open = ["function broken() {", ...Array.from({ length: 300 }, (_, i) => `step(${i});`)];
    expect(blockEnd(open, 0)).toEqual({ end: 199, cut: true });
  });
});

describe("View's options", () => {
  let root: string;
  let gaggle: RunningGaggle & Tools;
  beforeAll(async () => {
    root = scratch();
    gaggle = await workspaceGaggle(root);
  });
  afterAll(() => gaggle.close());

  const file = (name: string, content: string | Buffer) => fileUnder(root, name, content);

  it("gives the plain lines with show_line_numbers false, still cut and still saying where to read on", async () => {
    file("plain.txt", `${"w".repeat(2003)}\nsecond\nthird\n`);
    expect(await gaggle.text("View", { file_path: "plain.txt", show_line_numbers: false, limit: 2 })).toBe(
      `${"w".repeat(2000)}... [line cut: 3 more characters]\nsecond\n[lines 1-2 shown; more follow: pass offset 2 to read on]`,
    );
  });

  it("starts with the path, size, permissions, modification time and kind with include_metadata, for text, images and binary files", async () => {
    const path = file("meta/notes.txt", "x".repeat(1535) + "\n");
    chmodSync(path, 0o640);
    utimesSync(path, new Date("2024-05-06T07:08:09Z"), new Date("2024-05-06T07:08:09Z"));
    const text = await gaggle.text("View", { file_path: path, include_metadata: true, limit: 1 });
    expect(text.split("\n").slice(0, 7)).toEqual([
      `File: ${path}`,
      "Size: 1536 bytes (1.5 KB)",
      "Permissions: -rw-r----- (0640)",
      "Modified: 2024-05-06T07:08:09.000Z",
      "Kind: text",
      "",
      `     1\t${"x".repeat(1535)}`,
    ]);
    const png = file(
      "meta/dot.png",
      Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64"),
    );
    chmodSync(png, 0o644);
    const image = (await gaggle.call("View", { file_path: png, include_metadata: true })) as CallToolResult;
    expect(image.content[0]).toEqual({
      type: "text",
      text: expect.stringMatching(
        new RegExp(`^File: ${png}\nSize: 68 bytes\nPermissions: -rw-r--r-- \\(0644\\)\nModified: \\d{4}-[-\\dT:.]+Z\nKind: image/png$`),
      ),
    });
    expect(image.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
    const pdf = file("meta/doc.pdf", Buffer.from("%PDF-1.7\n\0binary"));
    const binary = (await gaggle.text("View", { file_path: pdf, include_metadata: true })).split("\n");
    expect(binary.slice(1, 2).concat(binary.slice(4))).toEqual([
      "Size: 16 bytes",
      "Kind: PDF document (binary)",
      "",
      "[a binary file: pass include_hex_dump: true to see its first 1024 bytes in hex]",
    ]);
  });

  it("refuses a binary file, hinting at include_hex_dump, and with it answers with the first 1024 bytes as hexdump -C shows them", async () => {
    const bytes = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(1100), Buffer.from("tail")]);
    const path = file("prog", bytes);
    expect(await gaggle.failure("View", { file_path: path })).toMatchObject({
      code: "INVALID_ARGS",
      error: `${path} is a binary file (ELF executable or library, 1112 bytes): View shows text and images`,
      hint: expect.stringContaining("include_hex_dump: true"),
    });
    const text = await gaggle.text("View", { file_path: path, include_hex_dump: true });
    const [first, ...dump] = text.split("\n");
    expect(first).toBe(`${path} is a binary file (ELF executable or library, 1112 bytes); its first 1024 bytes, as hexdump -C shows them:`);
    expect(dump).toEqual([
      "00000000  7f 45 4c 46 02 01 01 00  00 00 00 00 00 00 00 00  |.ELF............|",
      "00000010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|",
      "*",
      "00000400",
    ]);
    if ("found" in HEXDUMP) expect(`${dump.join("\n")}\n`).toBe(execFileSync(HEXDUMP.found, ["-C", "-n", "1024", path], { encoding: "latin1" }));
  });

  it("shows the Markdown section or code block find_section names, with its real line numbers, and how much of it limit allows", async () => {
    file("guide.md", `${GUIDE.join("\n")}\n`);
    expect(await gaggle.text("View", { file_path: "guide.md", find_section: "from SOURCE" })).toBe(
      '    14\t### From source\n    15\t\n    16\tClone it.\n[lines 14-16 of 20: the section headed "### From source"]',
    );
    file("server.ts", `${SERVER.join("\n")}\n`);
    expect(await gaggle.text("View", { file_path: "server.ts", find_section: "server.on", show_line_numbers: false })).toBe(
      [
        "): Server {",
        "  const server = listen(port, host);",
        "",
        '  server.on("error", (e) => {',
        "    log(e);",
        "  });",
        '[lines 7-12 of 19: line 10 holds "server.on"; shown with the block it opens]',
      ].join("\n"),
    );
    expect(await gaggle.text("View", { file_path: "server.ts", find_section: "function start", limit: 2 })).toBe(
      [
        '     1\timport { listen } from "./net";',
        "     2\t",
        '[lines 1-2 shown of the section\'s 1-14 (limit 2); line 4 holds "function start"; shown with the block it opens. ' +
          "View without find_section, with offset 2 and limit 12, shows the rest]",
      ].join("\n"),
    );
  });

  it("looks for find_section after offset lines, and says when the text is not there", async () => {
    file("again.txt", "needle one\nx\ny\nz\nw\nneedle two\n");
    expect(await gaggle.text("View", { file_path: "again.txt", find_section: "needle", offset: 1 })).toBe(
      '     3\ty\n     4\tz\n     5\tw\n     6\tneedle two\n[lines 3-6 of 6: line 6 holds "needle"; shown with the lines around it]',
    );
    expect(await gaggle.failure("View", { file_path: "again.txt", find_section: "needle", offset: 6 })).toMatchObject({
      code: "INVALID_ARGS",
      error: `"needle" was not found in ${root}/again.txt after line 6`,
      hint: expect.stringContaining("GrepTool"),
    });
    expect((await gaggle.failure("View", { file_path: "again.txt", find_section: "haystack" })).error).toBe(
      `"haystack" was not found in ${root}/again.txt`,
    );
  });
});
