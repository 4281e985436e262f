/** Jest runs the TypeScript sources directly; type checking is `npm run typecheck`. */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  transform: { "^.+\\.ts$": ["ts-jest", { diagnostics: false }] },
  // The SDK's sources import "./x.js" (what its ESM build needs); the file here is x.ts.
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  // The console and portal bundles the gateway serves (bin/build-web.mjs), built once per run.
  globalSetup: "<rootDir>/test/support/build-web.mjs",
  // Each file fails when a system it started logged one of moleculer-web's convention warnings.
  setupFilesAfterEnv: ["<rootDir>/test/support/after-each-file.ts"],
  testTimeout: 120000,
  maxWorkers: 2,
};
