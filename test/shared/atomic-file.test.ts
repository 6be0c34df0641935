// A file replaced whole, without blocking: writes asked for at once land in order, the newest last, and leave nothing beside it.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AtomicFile, writeFileAtomicAsync } from "../../src/shared/atomic-file.js";

describe("AtomicFile", () => {
  it("ends with the newest of many texts given at once, made with its mode, and no temporary file left", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-atomic-"));
    const file = new AtomicFile(join(dir, "deep", "state.json"), { mode: 0o600, dirMode: 0o700 });
    const writes = Array.from({ length: 50 }, (_, i) => file.write(`text ${i}`));
    await Promise.all(writes);
    expect(readFileSync(file.path, "utf8")).toBe("text 49");
    expect(statSync(file.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "deep")).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(dir, "deep"))).toEqual(["state.json"]);
  });

  it("rejects a write that cannot land with the file system's error, and removes its temporary file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-atomic-"));
    // A folder where the file should be: the rename over it fails.
    const path = join(dir, "taken");
    await writeFileAtomicAsync(join(path, "inside"), "x");
    await expect(writeFileAtomicAsync(path, "y")).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readdirSync(dir)).toEqual(["taken"]);
  });

  it("says by saved() whether its newest text is on disk: failed while the write fails, saved once one lands", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-atomic-"));
    const path = join(dir, "team.json");
    // A folder in the file's place: every rename over it fails, until it is gone.
    await writeFileAtomicAsync(join(path, "inside"), "x");
    const file = new AtomicFile(path);
    await expect(file.write("first")).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    await expect(file.saved()).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    rmSync(path, { recursive: true });
    await file.write("second");
    await expect(file.saved()).resolves.toBeUndefined();
    expect(readFileSync(path, "utf8")).toBe("second");
  });
});
