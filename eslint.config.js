import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", ".clearline/", "dist/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", setImmediate: "readonly", URL: "readonly", AbortController: "readonly", TextDecoder: "readonly", TextEncoder: "readonly", performance: "readonly", fetch: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // Money is exact: no float parsing anywhere between the wire and the ledger.
      "no-restricted-globals": ["error", { name: "parseFloat", message: "amounts are bigint minor units" }],
      "no-restricted-properties": ["error", { object: "Number", property: "parseFloat", message: "amounts are bigint minor units" }],
    },
  },
  {
    // A function a reader can hold in their head (STYLE.md: functions under about 70 lines).
    files: ["src/**/*.ts"],
    rules: { "max-lines-per-function": ["error", { max: 70, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Pure codecs: no database, network, clock or logger.
    files: ["src/protocols/**/*.ts", "src/normalize/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["pg", "**/db/**", "**/ledger/**", "**/records/**", "**/files/**", "**/sources/**", "**/gateway/**", "**/api/**", "pino", "**/observability/**", "node:net", "node:http"], message: "pure code imports no database, network or logger" },
      ] }],
    },
  },
);
