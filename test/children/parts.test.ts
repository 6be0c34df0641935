import { describe, expect, it } from "vitest";
import { backoffMs } from "../../src/children/backoff.js";
import { childEnv } from "../../src/children/processes/child-env.js";
import { LineSplitter } from "../../src/shared/stream-lines.js";
import { STDERR_LINE_CHARS, StderrRing } from "../../src/children/processes/stderr-ring.js";
import { toolFilter } from "../../src/children/tool-filter.js";

describe("StderrRing", () => {
  it("joins chunks into lines and keeps only the last ones", () => {
    const ring = new StderrRing(3);
    expect(ring.push("one\ntw")).toEqual(["one"]);
    expect(ring.push("o\r\nthree\nfour\nfi")).toEqual(["two", "three", "four"]);
    // Three complete lines are kept; the partial line that is still being written shows last.
    expect(ring.tail(10)).toEqual(["two", "three", "four", "fi"]);
    expect(ring.tail()).toEqual(["three", "four", "fi"]);
  });

  it("gives the lines written since a mark, as many as it still holds", () => {
    const ring = new StderrRing(3);
    ring.push("first run\n");
    const mark = ring.mark();
    expect(ring.since(mark)).toEqual([]);
    ring.push("second run\nstill the second\npartial");
    expect(ring.since(mark)).toEqual(["second run", "still the second", "partial"]);
    ring.push(" line\nmore\nand more\n");
    // Five lines since the mark; the ring holds three.
    expect(ring.since(mark)).toEqual(["partial line", "more", "and more"]);
  });
});

describe("toolFilter", () => {
  it("shows everything with no rules", () => {
    expect(toolFilter({ deny: [] })("anything")).toBe(true);
  });

  it("applies allow globs, then deny globs", () => {
    const visible = toolFilter({ allow: ["read_*", "list?"], deny: ["read_secret*"] });
    expect(["read_file", "lists", "read_secret_key", "write_file", "list", "read.file"].filter(visible)).toEqual(["read_file", "lists"]);
  });

  it("treats regular-expression characters in names literally", () => {
    expect(toolFilter({ allow: ["a.b"], deny: [] })("axb")).toBe(false);
    expect(toolFilter({ allow: ["a.b"], deny: [] })("a.b")).toBe(true);
  });
});

describe("backoffMs", () => {
  it("is 1 s after the first failed start, doubling to a 30 s cap", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 20].map(backoffMs)).toEqual([0, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });
});

describe("childEnv", () => {
  const parent = { PATH: "/bin", HOME: "/home/u", SECRET: "x", LANG: "C" };

  it("inherits the parent's environment with the child's own env over it", () => {
    expect(childEnv({ LANG: "fr", EXTRA: "1" }, true, parent)).toEqual({ PATH: "/bin", HOME: "/home/u", SECRET: "x", LANG: "fr", EXTRA: "1" });
  });

  it("passes only a minimal safe set and the child's env when not inheriting", () => {
    expect(childEnv({ EXTRA: "1" }, false, parent)).toEqual({ PATH: "/bin", HOME: "/home/u", LANG: "C", EXTRA: "1" });
  });
});

describe("childEnv and gaggle's own secrets", () => {
  it("never passes GAGGLE_AUTH_TOKEN on by inheritance, but lets a child's env set it", () => {
    const parent = { PATH: "/bin", GAGGLE_AUTH_TOKEN: "t0k" };
    expect(childEnv({}, true, parent)).toEqual({ PATH: "/bin" });
    expect(childEnv({ GAGGLE_AUTH_TOKEN: "own" }, true, parent)).toEqual({ PATH: "/bin", GAGGLE_AUTH_TOKEN: "own" });
  });
});

describe("LineSplitter", () => {
  it("joins chunks into lines, drops a trailing \\r, and holds the partial line", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(100, (line) => lines.push(line));
    splitter.push("a\r\nb");
    splitter.push("c\nd");
    expect(lines).toEqual(["a", "bc"]);
    expect(splitter.pending).toBe("d");
    splitter.flush();
    expect(lines).toEqual(["a", "bc", "d"]);
  });

  it("drops a \r that arrives in the chunk before its newline, and keeps blank lines", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(100, (line) => lines.push(line));
    splitter.push("one\r");
    splitter.push("\n\r\n\ntwo\nthr");
    splitter.push("ee\n");
    expect(lines).toEqual(["one", "", "", "two", "three"]);
    expect(splitter.pending).toBe("");
  });

  it("cuts a line past its limit, skips the rest of it, and goes on with the next", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(4, (line) => lines.push(line));
    splitter.push("123456");
    splitter.push("789");
    expect(splitter.pending).toBe("");
    splitter.push("0\nnext\n");
    expect(lines).toEqual(["1234 …[line cut at 4 characters]", "next"]);
  });
});

describe("StderrRing bounds", () => {
  it("never holds more than its line limit of a line that does not end", () => {
    const ring = new StderrRing(3);
    for (let i = 0; i < 100; i++) ring.push("x".repeat(1000));
    const [only] = ring.tail();
    expect(only!.length).toBeLessThan(STDERR_LINE_CHARS + 50);
    expect(only).toContain(`line cut at ${STDERR_LINE_CHARS} characters`);
  });
});
