// `npm run lint` (with `prettier --check`). Rules beyond the recommended sets guard the seams between services:
// no import cycles, no service importing another service's folder (only its `contract.ts`), no sdk/ in the server.
// Why each rule: CONTRIBUTING.md ("Habits").
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { importX, createNodeResolver } from "eslint-plugin-import-x";
import { readdirSync } from "node:fs";

// A service is services/<name>.service.ts plus its folder services/<name>/ (status has no folder).
const SERVICES = readdirSync(new URL("./services", import.meta.url))
  .filter((file) => file.endsWith(".service.ts"))
  .map((file) => file.slice(0, -".service.ts".length));

// One zone per pair: code of service `a` must not import service `b`'s folder (except b's contract.ts) or its
// .service.ts. The bus is how services talk; types and schemas they share live in shared/ or in the contract.
const crossServiceZones = SERVICES.flatMap((a) =>
  SERVICES.filter((b) => b !== a).flatMap((b) => [
    {
      target: [`./services/${a}/**/*`, `./services/${a}.service.ts`],
      from: `./services/${b}`,
      // The gateway builds its routes and the API document from every service's static declarations.
      except: a === "gateway" ? ["./contract.ts", "./endpoints.ts"] : ["./contract.ts"],
      message: `services/${a} must not import services/${b}/ (call it over the bus; types come from services/${b}/contract.ts or shared/).`,
    },
    {
      target: [`./services/${a}/**/*`, `./services/${a}.service.ts`],
      from: `./services/${b}.service.ts`,
      message: `services/${a} must not import services/${b}.service.ts (call it over the bus).`,
    },
  ]),
);

export default tseslint.config(
  {
    ignores: ["node_modules/", "dist/", "web/dist/", "coverage/", "data/", "sdk/dist/", "bench/results/", "bench/.dist/"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { "import-x": importX },
    settings: {
      // Without these, import-x cannot parse the .ts files it follows and no-cycle sees no edges.
      "import-x/extensions": [".ts", ".tsx", ".js", ".mjs", ".cjs"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx"] },
      "import-x/external-module-folders": ["node_modules", "node_modules/@types"],
      // The SDK's sources import "./x.js" (what its ESM build needs) for x.ts, hence the extension alias.
      "import-x/resolver-next": [
        createNodeResolver({
          extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json", ".node"],
          extensionAlias: { ".js": [".ts", ".js"] },
        }),
      ],
    },
    rules: {
      // TypeScript reports undefined names itself (and knows the node/jest globals from tsconfig).
      "no-undef": "off",
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "import-x/no-restricted-paths": [
        "error",
        {
          zones: [
            ...crossServiceZones,
            {
              target: ["./web"],
              from: ["./services", "./bin", "./cli"],
              message: "The browser pages talk to the server over HTTP only; what they share with it (pure domain rules) lives in shared/domain.",
            },
            {
              target: ["./services", "./shared"],
              from: "./sdk",
              message: "The server must not import the SDK (sdk/ is a separate package for integrators).",
            },
          ],
        },
      ],
      // Code says what it means: a real type (an SQL row interface per query, a typed model), or `unknown` and a
      // check. Tests and benchmarks are exempt below.
      "@typescript-eslint/no-explicit-any": "error",
      // It flags loop variables given a first value for the error message if the loop never sets them; that value is
      // deliberate, and `let x;` would only move the question to TypeScript's definite assignment.
      "no-useless-assignment": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true }],
    },
  },
  {
    // Tests and benchmarks read JSON bodies whose shape is what is being checked; `any` there is the honest type.
    files: ["test/**", "bench/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // Build scripts and the browser snippet are plain JavaScript run by node.
    files: ["**/*.mjs", "**/*.js"],
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
