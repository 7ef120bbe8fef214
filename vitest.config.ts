import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/deno/**", "node_modules/**", "dist/**"],
    // Tests drive real processes and cgroups; the machines are shared and slow.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    globalSetup: ["test/support/build.ts"],
    // Names a test that blocks its worker long enough to risk vitest's RPC timeout.
    setupFiles: ["test/support/blocked-worker.ts"],
  },
});
