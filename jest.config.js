/** Jest runs the TypeScript sources directly; type checking is `npm run typecheck`. */

// Every test system opens its own PGlite, and each test file compiles PGlite's WebAssembly again: with V8's baseline
// tier (Liftoff, Node's default) that first open takes about half as long as with TurboFan alone, production's
// default for its memory (docs/performance.md, "Memory and compiled start"). Set here, so the workers and the
// processes the tests start inherit it.
process.env.PGLITE_LIFTOFF ??= "true";
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
