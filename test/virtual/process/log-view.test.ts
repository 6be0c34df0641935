// The output log and its views: counts kept while writing, the cap, and head/tail reads that never read a whole 1 GB file.
import { closeSync, mkdtempSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_LINE_CHARS, readView, viewText } from "../../../src/virtual/process/log-view.js";
import { OutputLog } from "../../../src/virtual/process/output-log.js";

const opener = (path: string) => () => open(path, "r");

const dir = mkdtempSync(join(tmpdir(), "gaggle-logview-"));

/** Bytes this process has read through read(2) and friends so far (Linux). */
function bytesRead(): number {
  return Number(/rchar: (\d+)/.exec(readFileSync("/proc/self/io", "utf8"))?.[1]);
}

describe("OutputLog", () => {
  it("counts bytes and lines as written, and drops what passes the cap", async () => {
    const log = new OutputLog(join(dir, "capped.log"), 10);
    log.write(Buffer.from("one\ntwo"));
    await log.drained();
    expect({ bytes: log.bytes, lines: log.lines, truncated: log.truncated }).toEqual({ bytes: 7, lines: 2, truncated: false });
    log.write(Buffer.from("\nthree\n"));
    await log.close();
    expect({ bytes: log.bytes, lines: log.lines, dropped: log.droppedBytes, truncated: log.truncated }).toEqual({
      bytes: 10,
      lines: 3,
      dropped: 4,
      truncated: true,
    });
    expect(readFileSync(log.path, "utf8")).toBe("one\ntwo\nth");
  });
});

describe("readView", () => {
  it("shows head and tail of a small log, and how many lines lie between", async () => {
    const log = new OutputLog(join(dir, "small.log"), 1e6);
    log.write(Buffer.from(Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n"));
    await log.close();
    const view = await readView(opener(log.path), log, 2, 3);
    expect(view).toEqual({ head: ["line 1", "line 2"], tail: ["line 8", "line 9", "line 10"], omitted: 5 });
    expect(viewText(view)).toBe("line 1\nline 2\n[... 5 lines omitted ...]\nline 8\nline 9\nline 10");
    expect(await readView(opener(log.path), log, 0, 80)).toMatchObject({ head: [], omitted: 0, tail: { length: 10 } });
    expect((await readView(opener(log.path), log, 8, 8)).omitted).toBe(0);
  });

  it("cuts a very long line and says by how much", async () => {
    const log = new OutputLog(join(dir, "long-line.log"), 1e6);
    log.write(Buffer.from("x".repeat(MAX_LINE_CHARS + 500)));
    await log.close();
    expect((await readView(opener(log.path), log, 0, 1)).tail[0]).toMatch(/… \[500 more characters\]$/);
  });

  it("reads the ends of a 1 GB log without reading the whole file", async () => {
    const path = join(dir, "huge.log");
    const head = Array.from({ length: 100 }, (_, i) => `head ${i + 1}`).join("\n") + "\n";
    const tail = Array.from({ length: 100 }, (_, i) => `tail ${i + 1}`).join("\n") + "\n";
    const size = 1024 ** 3;
    // A sparse file: the middle is a hole of NUL bytes, costing no disk space.
    const fd = openSync(path, "w");
    writeSync(fd, head, 0);
    writeSync(fd, tail, size - Buffer.byteLength(tail));
    closeSync(fd);
    expect(statSync(path).size).toBe(size);

    const before = bytesRead();
    const view = await readView(opener(path), { bytes: size, lines: 200 }, 3, 2);
    const read = bytesRead() - before;
    expect(view).toEqual({ head: ["head 1", "head 2", "head 3"], tail: ["tail 99", "tail 100"], omitted: 195 });
    expect(read).toBeLessThan(4 * 1024 * 1024);

    // However deep the tail asked for, one end reads at most its scan limit, and says where it cut a line.
    const deep = await readView(opener(path), { bytes: size, lines: 200 }, 0, 500);
    expect(deep.tail.at(-1)).toBe("tail 100");
    expect(deep.tail[0]?.startsWith("…")).toBe(true);
    expect(bytesRead() - before - read).toBeLessThan(4 * 1024 * 1024);
  });
});
