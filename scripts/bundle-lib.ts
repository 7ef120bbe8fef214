/**
 * Bundles the built library's public face (dist/lib/mod.js) into one file,
 * dist/pkg/outlive.js, which the package's "." export names: `import
 * "outlive"` then costs Node's ESM loader one module of outlive's own instead
 * of some 150 resolved, read and linked one by one. A supervisor pays that
 * on every start, so after every restart before it can adopt anything: 108
 * ms against 62 ms for the bundle on this machine, measured for issue 24
 * (`bench/restart-adopt.ts`, whose module imports "outlive" as a user's
 * supervisor would).
 *
 * The unbundled modules stay: the types (dist/lib/mod.d.ts), the tests, the
 * harness and the spawner's own program (dist/lib/spawner/spawner-main.js,
 * which the library finds by walking up from wherever it runs) use them.
 * Left out of the bundle: npm packages (resolved from node_modules as usual).
 *
 * Run: npx tsc -p tsconfig.json && node dist/scripts/bundle-lib.js
 * (the package's `build`, `prepare` and `test` scripts do both).
 */
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const dist = join(dirname(fileURLToPath(import.meta.url)), "..");
const outfile = join(dist, "pkg", "outlive.js");

await build({
  entryPoints: [join(dist, "lib", "mod.js")],
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  outfile,
  logLevel: "warning",
});
console.log(`bundled the library into ${relative(process.cwd(), outfile) || outfile}`);
