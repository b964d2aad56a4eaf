import { defineConfig } from "vitest/config";

// Conformance: public sample files from other projects in ../shared/conformance, read in place
// (none is copied into this repository). Pure codecs only: no database.
export default defineConfig({
  test: {
    include: ["test/conformance/**/*.conformance.ts"],
    testTimeout: 60_000,
  },
});
