import { defineConfig } from "vitest/config";

// One PostgreSQL for the whole run (embedded unless DATABASE_URL is set); every test file gets
// its own database cloned from a migrated template (see test/support/global-setup.ts).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/conformance/**", "node_modules/**"],
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/ledger-arbiter.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
