// Runs gaggle's one-file build from V8's code cache. The first start compiles the bundle as usual and keeps what
// V8 compiled in the state dir (at exit, or once it has run a while); later starts hand that back to V8, which then
// neither parses nor compiles it again. A server that compiled more than the cache held (its first start may have
// been a one-shot command) keeps the larger cache. Node 22's module.enableCompileCache does the like for modules;
// this works on every Node gaggle supports.
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, dirname, isAbsolute, join } from "node:path";
import vm from "node:vm";
import { defaultStateDir } from "../config/state-dir.js";

/** Long enough for a server's start to have compiled what every start compiles; a one-shot command saves at exit. */
const SAVE_AFTER_MS = 10_000;
/** Caches of other builds (or Node versions) are removed once unused this long, */
const STALE_AFTER_MS = 7 * 24 * 3600_000;
/** and past this many of them, the oldest first: an installed gaggle and a build or two beside it keep theirs. */
const KEPT_OTHERS = 3;
/** How a cache still being written ends its name: it is renamed to the cache's own name once whole. */
const WRITING = ".tmp";

/**
 * Where the cache lives: $GAGGLE_CODE_CACHE, an absolute folder, or "off"; else `code-cache` in the default
 * state dir (it belongs to gaggle's code, not to one config).
 */
export function codeCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  const chosen = env.GAGGLE_CODE_CACHE;
  if (chosen === "off") return undefined;
  return chosen && isAbsolute(chosen) ? chosen : join(defaultStateDir(env), "code-cache");
}

/**
 * Runs `bundle` (a CommonJS file) as Node runs a CommonJS module. `hash` is the bundle's content hash: V8 checks
 * a cache against the source's length only, so the file name carries the hash, the Node version and the platform.
 */
export function runWithCodeCache(bundle: string, hash: string, env: NodeJS.ProcessEnv): void {
  const dir = codeCacheDir(env);
  const file = dir && join(dir, `${hash}-node${process.versions.node}-${process.platform}-${process.arch}.bin`);
  const cachedData = file ? readIfThere(file) : undefined;
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${readProgram(bundle)}\n})`, {
    filename: bundle,
    cachedData,
  });
  if (file) keepCompiled(script, file, cachedData && !script.cachedDataRejected ? cachedData.length : 0);
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
}

/** A piece of the program read at a time: below the size malloc gives a mapping of its own (128 KiB). */
const PIECE_BYTES = 64 * 1024;

/**
 * The program's text, read a piece at a time into one small buffer. Read whole, its 2.8 MB pass through a buffer
 * malloc maps on its own (readFileSync's UTF-8 path grows one to 4 MB); freeing that raises glibc's threshold for
 * mapping and trimming to its size, and then memory the start freed stays in the process, 3 to 6 MB of a server's
 * idle RSS. The build keeps the program ASCII (scripts/bundle.mjs), so each piece decodes alone.
 */
function readProgram(bundle: string): string {
  const fd = openSync(bundle, "r");
  try {
    const piece = Buffer.allocUnsafeSlow(PIECE_BYTES);
    let text = "";
    for (let read = readSync(fd, piece, 0, PIECE_BYTES, null); read > 0; read = readSync(fd, piece, 0, PIECE_BYTES, null)) {
      text += piece.toString("latin1", 0, read);
    }
    return text;
  } finally {
    closeSync(fd);
  }
}

function readIfThere(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Saves the cache once, if it is larger than the `usedBytes` this start was given: after SAVE_AFTER_MS (written
 * without blocking, as a server may be answering calls by then), or at exit when there was no usable cache. Written
 * whole or not at all (a rename).
 */
function keepCompiled(script: vm.Script, file: string, usedBytes: number): void {
  let taken = false;
  const larger = (): Buffer | undefined => {
    if (taken) return undefined;
    taken = true;
    const data = script.createCachedData();
    return data.length > usedBytes ? data : undefined;
  };
  const temporary = `${file}.${process.pid}${WRITING}`;
  setTimeout(() => {
    const data = larger();
    if (!data) return;
    void (async () => {
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      await writeFile(temporary, data, { mode: 0o600 });
      await rename(temporary, file);
      const entries = await Promise.all(
        (await readdir(dirname(file))).map(async (name) => ({ name, mtimeMs: (await stat(join(dirname(file), name))).mtimeMs })),
      );
      await Promise.all(unwanted(entries, basename(file)).map((name) => rm(join(dirname(file), name), { force: true })));
    })().catch(() => {
      // A cache that cannot be written costs the next start its compile, nothing more.
    });
  }, SAVE_AFTER_MS).unref();
  if (usedBytes > 0) return;
  process.once("exit", () => {
    try {
      const data = larger();
      if (!data) return;
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(temporary, data, { mode: 0o600 });
      renameSync(temporary, file);
      const entries = readdirSync(dirname(file)).map((name) => ({ name, mtimeMs: statSync(join(dirname(file), name)).mtimeMs }));
      for (const name of unwanted(entries, basename(file))) rmSync(join(dirname(file), name), { force: true });
    } catch {
      // As above.
    }
  });
}

/**
 * The files of the cache folder to remove beside `keep` (this build's cache): the caches of other builds (or Node
 * versions) unused for STALE_AFTER_MS, and all but the KEPT_OTHERS newest of them, so that a developer's many
 * builds do not pile up. A file's time is when it was last written. A cache another gaggle is still writing (its
 * temporary file, renamed once whole) is left to it, unless it has been there so long that its writer is gone.
 */
function unwanted(entries: Array<{ name: string; mtimeMs: number }>, keep: string): string[] {
  const now = Date.now();
  const stale = (entry: { mtimeMs: number }) => now - entry.mtimeMs > STALE_AFTER_MS;
  const written = entries.filter((entry) => entry.name !== keep && !entry.name.endsWith(WRITING)).sort((a, b) => b.mtimeMs - a.mtimeMs);
  const abandoned = entries.filter((entry) => entry.name.endsWith(WRITING) && stale(entry));
  return [...written.filter((entry, rank) => rank >= KEPT_OTHERS || stale(entry)), ...abandoned].map((entry) => entry.name);
}
