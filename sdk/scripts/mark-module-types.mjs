// Marks each build folder with its module type, so Node (and TypeScript's node16
// resolution) read dist/esm as ES modules and dist/cjs as CommonJS, whatever the
// package's own "type" is.
import { writeFileSync } from "node:fs";

writeFileSync(new URL("../dist/esm/package.json", import.meta.url), '{ "type": "module" }\n');
writeFileSync(new URL("../dist/cjs/package.json", import.meta.url), '{ "type": "commonjs" }\n');
