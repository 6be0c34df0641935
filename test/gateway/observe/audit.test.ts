// The audit log: what a record keeps of arguments, the file's mode, its rotation by size, and the ring the page reads.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditFile, CallRing, RECENT_CALLS } from "../../../src/gateway/observe/audit-log.js";
import { estimatedJsonBytes, recordedArguments, type AuditRecord } from "../../../src/gateway/observe/audit-record.js";
import { startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { fixtureChild, NO_BUILT_INS } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

const dir = mkdtempSync(join(tmpdir(), "gaggle-audit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function record(n: number, principal = "local"): AuditRecord {
  return {
    time: new Date(0).toISOString(),
    principal,
    session: "stdio",
    client: "test/1",
    method: "tools/call",
    target: `tool_${n}`,
    child: "echo",
    tool: "echo",
    outcome: "ok",
    error: null,
    duration_ms: n,
    bytes_in: 2,
    bytes_out: 2,
  };
}

describe("recorded arguments", () => {
  const args = { path: "/tmp/x", api_key: "sk-123", nested: { password: "hunter2", depth: [{ token: "t" }] }, text: "y".repeat(3000) };

  it("keep nothing, the names, a hash, or everything but secrets", () => {
    expect(recordedArguments(args, "none")).toBeUndefined();
    expect(recordedArguments(args, "keys")).toEqual(["api_key", "nested", "path", "text"]);
    expect(recordedArguments(args, "hash")).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(recordedArguments({ a: 1 }, "hash")).not.toEqual(recordedArguments({ a: 2 }, "hash"));
    const full = recordedArguments(args, "full") as Record<string, unknown>;
    expect(full).toMatchObject({ path: "/tmp/x", api_key: "[redacted]", nested: { password: "[redacted]", depth: [{ token: "[redacted]" }] } });
    expect(JSON.stringify(full)).not.toMatch(/sk-123|hunter2/);
    expect(full.text).toMatch(/^y{1024}\[\.\.\. 1976 more characters\]$/);
  });
});

describe("bytes in and out", () => {
  it("are estimated without writing the value out, exactly for ASCII text that needs no escapes", () => {
    const values = [
      {},
      [],
      { content: [{ type: "text", text: "hello" }], isError: false, structuredContent: { n: 1.5, big: 12345, none: null, list: [1, "two", [], {}] } },
      { skipped: undefined, kept: "x" },
      [1, 2, 3],
      "plain",
    ];
    for (const value of values) expect(estimatedJsonBytes(value)).toBe(Buffer.byteLength(JSON.stringify(value)));
  });
});

describe("the audit file", () => {
  it("is its owner's alone, also when it was there before with another mode", async () => {
    const path = join(dir, "mode", "audit.jsonl");
    const file = new AuditFile({ path, arguments: "keys", maxBytes: 1 << 20, keep: 1 });
    file.write(record(1));
    await file.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    chmodSync(path, 0o644);
    const again = new AuditFile({ path, arguments: "keys", maxBytes: 1 << 20, keep: 1 });
    again.write(record(2));
    await again.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(
      readFileSync(path, "utf8")
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as AuditRecord).target),
    ).toEqual(["tool_1", "tool_2"]);
  });

  it("rotates by size, keeping as many old files as asked, every record in one of them in order", async () => {
    const path = join(dir, "rotate.jsonl");
    const line = `${JSON.stringify(record(0))}\n`.length;
    const file = new AuditFile({ path, arguments: "keys", maxBytes: line * 3, keep: 2 });
    for (let n = 0; n < 10; n++) {
      file.write(record(n));
      // One write at a time: each flush may rotate before it writes.
      await file.drained();
    }
    await file.close();
    const read = (name: string) =>
      readFileSync(name, "utf8")
        .trim()
        .split("\n")
        .map((text) => (JSON.parse(text) as AuditRecord).duration_ms);
    expect(read(path)).toEqual([9]);
    expect(read(`${path}.1`)).toEqual([6, 7, 8]);
    expect(read(`${path}.2`)).toEqual([3, 4, 5]);
    expect(existsSync(`${path}.3`)).toBe(false);
    for (const name of [path, `${path}.1`, `${path}.2`]) expect(statSync(name).mode & 0o777).toBe(0o600);
  });

  it("appends to what an earlier run wrote", async () => {
    const path = join(dir, "append.jsonl");
    writeFileSync(path, `${JSON.stringify(record(100))}\n`);
    const file = new AuditFile({ path, arguments: "keys", maxBytes: 1 << 20, keep: 1 });
    file.write(record(101));
    await file.close();
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(2);
  });
});

describe("the ring of recent calls", () => {
  it("keeps the latest, newest first, and each principal's own on asking", () => {
    const ring = new CallRing();
    for (let n = 0; n < RECENT_CALLS + 5; n++) {
      const { time: _time, ...call } = record(n, n % 2 === 0 ? "alice" : "bob");
      ring.add(Date.UTC(2026, 0, 1, 0, 0, n), call);
    }
    const all = ring.latest();
    expect(all).toHaveLength(RECENT_CALLS);
    expect(all[0]!.duration_ms).toBe(RECENT_CALLS + 4);
    expect(all[0]!.time).toBe(new Date(Date.UTC(2026, 0, 1, 0, 0, RECENT_CALLS + 4)).toISOString());
    expect(Object.keys(all[0]!)[0]).toBe("time");
    expect(ring.latest("bob").every((entry) => entry.principal === "bob")).toBe(true);
    expect(ring.latest("bob")).toHaveLength(RECENT_CALLS / 2);
  });
});

describe("an audit path gaggle cannot write", () => {
  let gaggle: RunningGaggle;
  // A folder of that name cannot be made: a file holds the name.
  const blocked = join(dir, "a-file");
  const path = join(blocked, "audit.jsonl");
  beforeAll(async () => {
    writeFileSync(blocked, "not a folder\n");
    gaggle = await startGaggle(`${NO_BUILT_INS}\n${fixtureChild("echo", "echo.mjs")}\n[audit]\npath = ${JSON.stringify(path)}\n`);
  });
  afterAll(() => gaggle?.close());

  it("is said in the log as gaggle starts, with the path, the reason and what to do, and the calls are answered", async () => {
    const line = await until(
      () =>
        gaggle
          .stderr()
          .split("\n")
          .find((text) => text.includes('"subsystem":"audit"')),
      (found) => found !== undefined,
    );
    const logged = JSON.parse(line!) as { level: number; path: string; reason: string; msg: string };
    expect(logged).toMatchObject({ level: 50, path, reason: expect.stringContaining(blocked) });
    expect(logged.msg).toContain(`cannot write the audit log ${path}`);
    expect(logged.msg).toContain("give [audit] path a file in a folder gaggle may create and write");
    const result = await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "echo", arguments: { text: "unaudited" } });
    expect(textOf(result)).toContain("unaudited");
  });
});
