// The catalog's files: one per child name and definition under <state_dir>/catalog/, and entries of other
// definitions of the same name removed once nobody has written them for STALE_ENTRY_MS.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CatalogShelf, STALE_ENTRY_MS } from "../../src/children/catalog.js";
import { childConfigOf } from "../helpers/config.js";

const entry = (env: string) => childConfigOf(`[mcp_servers.echo]\ncommand = "node"\nargs = ["echo.mjs"]\ncwd = "/"\nenv = { ${env} }`);
const tool = { name: "echo", inputSchema: { type: "object" as const } };

describe("the catalog's files", () => {
  it("keep one entry per definition of a child, each read back only by its own definition", async () => {
    const state = mkdtempSync(join(tmpdir(), "catalog-files-"));
    const one = new CatalogShelf(state, entry('A = "1"'));
    const two = new CatalogShelf(state, entry('B = "1"'));
    one.record("tools", [tool]);
    two.record("tools", [{ ...tool, name: "other" }]);
    await Promise.all([one.settled(), two.settled()]);
    expect(one.file).not.toBe(two.file);
    expect(new CatalogShelf(state, entry('A = "2"')).read().tools).toEqual([tool]);
    expect(new CatalogShelf(state, entry('B = "2"')).read().tools).toEqual([{ ...tool, name: "other" }]);
  });

  it("remove another definition's entry of the same name when it was not written for STALE_ENTRY_MS, and nothing else", async () => {
    const state = mkdtempSync(join(tmpdir(), "catalog-files-"));
    const folder = join(state, "catalog");
    mkdirSync(folder, { recursive: true });
    const long = (Date.now() - STALE_ENTRY_MS - 60_000) / 1000;
    const written = (name: string, old: boolean) => {
      writeFileSync(join(folder, name), "{}");
      if (old) utimesSync(join(folder, name), long, long);
      return join(folder, name);
    };
    const stale = written("echo.0000000000000000.json", true);
    const recent = written("echo.1111111111111111.json", false);
    const otherChild = written("echo-two.2222222222222222.json", true);
    const shelf = new CatalogShelf(state, entry('A = "1"'));
    shelf.record("tools", [tool]);
    await shelf.settled();
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    expect(existsSync(otherChild)).toBe(true);
    expect(readdirSync(folder)).toHaveLength(3);
  });
});
