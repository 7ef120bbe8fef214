/**
 * Builds outlive's single executable for linux-x64, `dist/exe/outlive`, and
 * its release archive, `dist/exe/outlive-linux-x64.tar.gz` (`outlive` and
 * `outlive-shim`), from the same sources as the npm package: a machine with
 * no Node installed runs the whole CLI (less `scenario`) from one file.
 *
 * 1. esbuild bundles the CLI's executable entry (scripts/exe/entry.ts: the
 *    CLI, or the storage's spawner in its own mode) and every npm package it
 *    uses into one CommonJS file; no `import()` may be left in it (a code
 *    cache allows none: the build fails if one is).
 * 2. Node 24 (scripts/exe/node-inside.ts) makes the blob: that file, a code
 *    cache of it, and the assets the executable carries (the version, the
 *    wire protocol's schema, outlive-shim and its SHA-256:
 *    lib/single-executable.ts), with `execArgvExtension: "none"`, so the
 *    executable obeys no `NODE_OPTIONS`.
 * 3. A copy of that Node, stripped of its symbols, gets the blob injected by
 *    postject (the fuse NODE_SEA_FUSE_…), and must then say its version.
 *
 * Exit 0 built; 3 when it cannot be built here (another platform, no Node 24
 * to be had from npm, no shim built, no `strip`), with the reason; 1 when a
 * step failed.
 *
 * Run: npm run build:exe [-- --refresh-node] (tsc and the shim's build first).
 * `--out DIR` builds elsewhere than dist/exe/; `--no-code-cache` leaves the
 * code cache out, to measure what it buys (bench/RESULTS.md, exe).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { projectRoot } from "../harness/shared/project-root.ts";
import { EXECUTABLE_ASSETS } from "../lib/single-executable.ts";
import { SHIM_BUILD } from "../lib/spawn/shim-path.ts";
import { nodeInside } from "./exe/node-inside.ts";

/** The sentinel Node's SEA support looks for, flipped by postject when a blob is injected. */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { "refresh-node": { type: "boolean" }, "no-code-cache": { type: "boolean" }, out: { type: "string" } },
});
const started = Date.now();
const root = projectRoot();
const outDir = values.out ? resolve(values.out) : join(root, "dist", "exe");
const exe = join(outDir, "outlive");
const archive = join(outDir, "outlive-linux-x64.tar.gz");
const shown = (p: string) => relative(process.cwd(), p) || p;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

function cannot(why: string): never {
  console.error(`build-exe: cannot build the executable here: ${why}`);
  process.exit(3);
}

if (process.platform !== "linux" || process.arch !== "x64") cannot(`it is built for linux-x64; this is ${process.platform}-${process.arch}`);
const shim = join(root, SHIM_BUILD);
if (!existsSync(shim)) cannot(`${shim} is not built (npm run build builds it where cargo is)`);
try {
  execFileSync("strip", ["--version"], { stdio: "ignore" });
} catch {
  cannot("no strip on PATH (apt-get install binutils)");
}
let node: { path: string; version: string };
try {
  node = nodeInside({ refresh: values["refresh-node"] });
} catch (error) {
  cannot((error as Error).message);
}

mkdirSync(outDir, { recursive: true });
const work = mkdtempSync(join(outDir, ".build-"));
try {
  // 1. One CommonJS file. import.meta.url names the executable itself: the few lookups beside a module's file
  // (the package.json, the schema file, the spawner's file) are passed over in the executable, and a
  // forgotten one finds nothing rather than throwing.
  const bundle = join(work, "outlive.cjs");
  const bundled = await build({
    entryPoints: [join(root, "dist", "scripts", "exe", "entry.js")],
    bundle: true,
    format: "cjs",
    platform: "node",
    target: `node${node.version.slice(1).split(".")[0]}`,
    outfile: bundle,
    define: { "import.meta.url": JSON.stringify("file:///proc/self/exe") },
    keepNames: true,
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
  });
  const code = readFileSync(bundle, "utf8");
  const left = code.match(/.{0,60}\bimport\(.{0,60}/);
  if (left) throw new Error(`the bundle still loads a module by import() at run time, which a code cache forbids: …${left[0]}…`);
  console.log(`build-exe: bundled the CLI (${Object.keys(bundled.metafile.inputs).length} modules, ${mib(code.length)})`);

  // 2. The blob, made by the Node that goes inside (the code cache is that V8's).
  const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
  writeFileSync(join(work, "version"), `${version}\n`);
  const shimSha256 = createHash("sha256").update(readFileSync(shim)).digest("hex");
  writeFileSync(join(work, "shim.sha256"), `${shimSha256}\n`);
  const blob = join(work, "sea.blob");
  writeFileSync(join(work, "sea-config.json"), JSON.stringify({
    main: bundle,
    output: blob,
    disableExperimentalSEAWarning: true,
    useSnapshot: false,
    useCodeCache: !values["no-code-cache"],
    execArgvExtension: "none",
    assets: {
      [EXECUTABLE_ASSETS.version]: join(work, "version"),
      [EXECUTABLE_ASSETS.schema]: join(root, "lib", "rpc", "schema", "outlive-rpc.schema.json"),
      [EXECUTABLE_ASSETS.shim]: shim,
      [EXECUTABLE_ASSETS.shimSha256]: join(work, "shim.sha256"),
    },
  }, null, 2));
  execFileSync(node.path, ["--experimental-sea-config", join(work, "sea-config.json")], { cwd: work, stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH } });

  // 3. The executable: Node stripped, the blob injected, then asked its version.
  const made = join(work, "outlive");
  copyFileSync(node.path, made);
  chmodSync(made, 0o755);
  // strip warns of the `.note.100` sections it does not know, and keeps them: said only if it fails.
  execFileSync("strip", ["--strip-all", made], { stdio: ["ignore", "ignore", "pipe"] });
  // postject's own process: LIEF, inside it, warns of the same sections on stderr; said only if it fails.
  const postject = createRequire(import.meta.url).resolve("postject/dist/cli.js");
  execFileSync(process.execPath, [postject, made, "NODE_SEA_BLOB", blob, "--sentinel-fuse", SEA_FUSE], { stdio: ["ignore", "pipe", "pipe"] });
  const said = execFileSync(made, ["--version"], { encoding: "utf8", env: {}, timeout: 30_000 }).trim();
  if (said !== `outlive ${version}`) throw new Error(`the executable says ${JSON.stringify(said)} to --version, not "outlive ${version}"`);
  renameSync(made, exe);

  // The release archive: the executable and the shim beside it (dist/exe/ holds both, as the archive unpacks).
  copyFileSync(shim, join(outDir, "outlive-shim"));
  chmodSync(join(outDir, "outlive-shim"), 0o755);
  execFileSync("tar", ["-czf", join(work, "archive.tar.gz"), "--owner=0", "--group=0", "--numeric-owner", "-C", outDir, "outlive", "outlive-shim"]);
  renameSync(join(work, "archive.tar.gz"), archive);
} catch (error) {
  console.error(`build-exe: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (!process.exitCode) {
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`build-exe: built ${shown(exe)} (${mib(statSync(exe).size)}, Node ${node.version} inside, stripped) and ${shown(archive)} (${mib(statSync(archive).size)}) in ${seconds} s`);
}
