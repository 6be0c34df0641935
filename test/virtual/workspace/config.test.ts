// [virtual.workspace]: off by default, its roots from the config file's folder, its timeouts held to Bash's ten minutes.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { validateConfigText } from "../../../src/config/index.js";
import { configError, tempDir } from "../../config/files.js";

const tmp = tempDir();
afterAll(() => tmp.remove());
const file = join(tmp.dir, "children_config.toml");

const settings = (text: string) => validateConfigText(`[virtual.workspace]\n${text}\n`, file, {}).virtual.workspace;
const problems = (text: string) => configError(() => settings(text)).issues.map((issue) => `${issue.path}: ${issue.message}`);

describe("[virtual.workspace]", () => {
  it("is off unless enabled, with its roots from the config file's folder and gomcptest's limits", () => {
    expect(settings("")).toMatchObject({
      enabled: false,
      roots: [tmp.dir],
      timeoutMs: 120_000,
      maxTimeoutMs: 600_000,
      maxOutputChars: 30_000,
      maxEditBytes: 10 * 1024 * 1024,
      backups: false,
    });
    expect(settings("backups = true").backups).toBe(true);
    expect(problems('backups = "yes"')).toEqual(['virtual.workspace.backups: expected true or false, got string "yes"']);
    expect(settings('enabled = true\nroots = ["a", "/abs"]').roots).toEqual([join(tmp.dir, "a"), "/abs"]);
  });

  it("holds timeouts to 600000 ms, and the default to the maximum", () => {
    expect(problems("timeout_ms = 600001")).toEqual(["virtual.workspace.timeout_ms: expected at most 600000, got number 600001"]);
    expect(problems("max_timeout_ms = 0")).toEqual([expect.stringMatching(/^virtual\.workspace\.max_timeout_ms: /)]);
    expect(problems("timeout_ms = 5000\nmax_timeout_ms = 1000")).toEqual([
      "virtual.workspace.timeout_ms: expected at most max_timeout_ms (1000), got 5000",
    ]);
    expect(settings("max_timeout_ms = 1000")).toMatchObject({ timeoutMs: 1000, maxTimeoutMs: 1000 });
    expect(problems("roots = []")).toEqual(["virtual.workspace.roots: expected at least one directory"]);
  });
});
