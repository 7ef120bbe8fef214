/**
 * Bundles the built CLI (dist/scripts/outlive.js) into dist/cli/: one file
 * for the entry and the modules every command shares, and one chunk a
 * command, still loaded only when that command runs. A command otherwise
 * pays for Node's ESM loader resolving, reading and linking some 130
 * modules one by one: 30–40 ms of `outlive ps`'s start-up here, a quarter
 * of it (bench/cli-startup.ts). The installed `outlive` (scripts/bin.ts)
 * runs the bundle when it is there; the unbundled modules stay the
 * library's and the tests'.
 *
 * Left out of the bundle: npm packages (resolved from node_modules as
 * usual), and the `scenario` command, whose harness finds its cases and
 * type-stripping hooks beside its own files (import.meta.url); the bundle
 * imports it from dist/scripts/ as it is.
 *
 * Run: npx tsc -p tsconfig.json && node dist/scripts/bundle-cli.js
 * (the package's `build`, `prepare` and `test` scripts do both).
 */
import { rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const dist = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(dist, "cli");

/** Modules imported from dist/scripts/ as they are, not bundled (see above). */
const UNBUNDLED = [/\/commands\/scenario\.js$/];

const keepUnbundled: Plugin = {
  name: "outlive-unbundled",
  setup(b) {
    b.onResolve({ filter: /\.js$/ }, (args) => {
      if (args.kind === "entry-point") return undefined;
      const target = join(args.resolveDir, args.path);
      if (!UNBUNDLED.some((re) => re.test(target))) return undefined;
      return { path: `./${relative(outdir, target)}`.replace(/^\.\/\.\.\//, "../"), external: true };
    });
  },
};

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: [join(dist, "scripts", "outlive.js")],
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  outdir,
  plugins: [keepUnbundled],
  logLevel: "warning",
  metafile: true,
});
const files = Object.keys(result.metafile.outputs).length;
console.log(`bundled the CLI into ${relative(process.cwd(), outdir) || outdir}/ (${files} files)`);
