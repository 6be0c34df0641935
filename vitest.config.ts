import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests spawn real gateways and child servers; lifecycle waits (grace periods, backoff) need room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/file-setup.ts"],
  },
});
