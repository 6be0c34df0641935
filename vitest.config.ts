import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests spawn real gateways and child servers; lifecycle waits (grace periods, backoff) need room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // A file spends most of its time waiting on the processes it starts; vitest's default of one worker less than the
    // cores leaves a 2-core machine running one file at a time.
    maxWorkers: 2,
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/file-setup.ts"],
  },
});
