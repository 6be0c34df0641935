#!/usr/bin/env node
// gaggle's executable. Built, it runs the one-file program beside it (gaggle.cjs) from V8's code cache, so a
// start parses and compiles nothing it compiled before; straight from tsc, it imports the program module by module.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runWithCodeCache } from "./cli/code-cache.js";

/** The bundle's content hash, set by the build (see package.json's bundle script); undefined in tsc's output. */
declare const GAGGLE_BUNDLE_HASH: string | undefined;

if (typeof GAGGLE_BUNDLE_HASH === "string") {
  runWithCodeCache(join(dirname(fileURLToPath(import.meta.url)), "gaggle.cjs"), GAGGLE_BUNDLE_HASH, process.env);
} else {
  await import("./cli/main.js");
}
