/**
 * `npm run docs:api`: the API reference, rendered from the library's own
 * sources by `deno doc --html` (the Deno that the devDependencies install),
 * into dist/docs/api/. Each export of lib/mod.ts gets a page with its JSDoc
 * and its `@example`s, so the reference is the code's own word and cannot
 * drift from it. `--output DIR` writes it elsewhere (the docs' test does).
 *
 * Run: npx tsc -p tsconfig.json && node dist/scripts/docs-api.js
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

// dist/scripts/ when compiled, scripts/ when run from the sources: the project root is the folder with package.json above.
let root = dirname(fileURLToPath(import.meta.url));
while (!existsSync(join(root, "package.json"))) root = dirname(root);

const { values } = parseArgs({ options: { output: { type: "string", default: join(root, "dist", "docs", "api") } } });
const output = resolve(values.output!);
const deno = join(root, "node_modules", ".bin", "deno");
if (!existsSync(deno)) {
  console.error(`docs:api: ${deno} is missing; run npm ci (deno is a devDependency)`);
  process.exit(1);
}
// deno doc makes the output folder but not its parents.
mkdirSync(dirname(output), { recursive: true });
const r = spawnSync(deno, ["doc", "--html", "--name=outlive", `--output=${output}`, "lib/mod.ts"], { cwd: root, stdio: "inherit", env: { ...process.env, NO_COLOR: "1" } });
if (r.status !== 0) process.exit(r.status ?? 1);
console.log(`the API reference is in ${relative(process.cwd(), output) || output}/index.html`);
