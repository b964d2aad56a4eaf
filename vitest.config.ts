import { defineConfig } from "vitest/config";

// One PostgreSQL for the whole run (embedded unless DATABASE_URL is set); every test file gets
// its own database cloned from a migrated template (see test/support/global-setup.ts).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // test/ha needs root and a cluster of its own: `npm run test:ha` (vitest.ha.config.ts).
    exclude: ["test/conformance/**", "test/ha/**", "node_modules/**"],
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/ledger-arbiter.ts"],
    // Tests wait for events (a response, a row, a log line), never for a deadline of their own;
    // these are the last guard against a hang, long enough that a busy machine never reaches them.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
