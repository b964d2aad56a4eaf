import { defineConfig } from "vitest/config";

// `npm run test:ha`: the tests in test/ha/ bring up a real PostgreSQL HA cluster (etcd, Patroni,
// HAProxy; test/support/ha/) and need root. They are kept out of `npm test` so the default suite
// runs anywhere; .ci/run runs them after it (see docs/operations/ha-cluster.md).
export default defineConfig({
  test: {
    include: ["test/ha/**/*.test.ts"],
    // Each file brings up its own cluster on its own ports; one cluster at a time on 2 cores.
    fileParallelism: false,
    pool: "forks",
    // Tests wait for events with bounds of their own; these are the last guard against a hang.
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
