// The output log's write queue: chunks land in the order given, the queue asks its sources to wait past its bound,
// and the counts describe what is on disk.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OutputLog } from "../../../src/virtual/process/output-log.js";

const dir = mkdtempSync(join(tmpdir(), "gaggle-outputlog-"));

describe("OutputLog's queue", () => {
  it("writes chunks in the order given, and asks for a pause once more than it should hold waits", async () => {
    const log = new OutputLog(join(dir, "ordered.log"), 64 * 1024 * 1024);
    const chunks = Array.from({ length: 40 }, (_, i) => Buffer.from(`${String(i).padStart(2, "0")}${"x".repeat(64 * 1024 - 3)}\n`));
    const answers = chunks.map((chunk) => log.write(chunk));
    expect(answers[0]).toBe(true);
    expect(answers.at(-1)).toBe(false);
    await log.drained();
    expect(readFileSync(log.path).equals(Buffer.concat(chunks))).toBe(true);
    expect({ bytes: log.bytes, lines: log.lines }).toEqual({ bytes: 40 * 64 * 1024, lines: 40 });
    expect(log.write(Buffer.from("more"))).toBe(true);
    await log.close();
    expect(log.write(Buffer.from("after"))).toBe(true);
    expect(readFileSync(log.path, "utf8").endsWith("\nmore")).toBe(true);
    expect(log.droppedBytes).toBe(5);
  });

  it("says why it cannot open the file", async () => {
    const log = new OutputLog(join(dir, "missing", "folder", "x.log"), 10);
    await expect(log.opened()).rejects.toThrow(/ENOENT/);
    log.write(Buffer.from("lost"));
    await log.close();
    expect({ error: log.writeError, dropped: log.droppedBytes, bytes: log.bytes }).toEqual({ error: "ENOENT", dropped: 4, bytes: 0 });
  });
});
