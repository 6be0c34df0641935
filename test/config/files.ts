// Test helpers for config tests: temp directories with config files, and catching ConfigError.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "vitest";
import { ConfigError } from "../../src/config/index.js";

export interface TempDir {
  dir: string;
  /** Writes `text` to `dir/name` (creating folders) and returns the absolute path. */
  write(name: string, text: string): string;
  remove(): void;
}

export function tempDir(): TempDir {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-config-"));
  return {
    dir,
    write(name, text) {
      const path = join(dir, name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runs `fn`, asserts it throws a ConfigError, and returns it. */
export function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    if (err instanceof ConfigError) return err;
  }
  throw new Error("expected a ConfigError, but nothing was thrown");
}
