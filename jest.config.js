/** Jest runs the TypeScript sources directly; type checking is `npm run typecheck`. */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  transform: { "^.+\\.ts$": ["ts-jest", { diagnostics: false }] },
  testTimeout: 120000,
  maxWorkers: 2,
};
