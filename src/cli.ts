#!/usr/bin/env node
// gaggle's executable. Built, it runs the one-file program beside it (gaggle.cjs) from V8's code cache, so a
// start parses and compiles nothing it compiled before; straight from tsc, it imports the program module by module.
// A client's stdio whose config's daemon runs is relayed to it before the program is loaded at all.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runWithCodeCache } from "./cli/code-cache.js";
import { relayToRunningDaemon } from "./cli/fast-relay.js";

/** The bundle's content hash, set by the build (see package.json's bundle script); undefined in tsc's output. */
declare const GAGGLE_BUNDLE_HASH: string | undefined;

if (typeof GAGGLE_BUNDLE_HASH === "string") {
  // A client's stdio with the config's daemon running: a relay, which needs nothing of the program.
  if (!(await relayToRunningDaemon(process.argv.slice(2), process.env))) {
    runWithCodeCache(join(dirname(fileURLToPath(import.meta.url)), "gaggle.cjs"), GAGGLE_BUNDLE_HASH, process.env);
  }
} else {
  await import("./cli/main.js");
}
