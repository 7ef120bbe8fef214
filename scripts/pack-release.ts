/**
 * Packs a release as npm would publish it, into dist/release/ (or `--out DIR`):
 *
 * - `outlive-shim-linux-x64-VERSION.tgz`: the per-platform package
 *   `@outlive/shim-linux-x64`, which holds only the built outlive-shim
 *   (`bin/outlive-shim`, statically linked) and says which platform it is for
 *   (`os`, `cpu`), so npm installs it only there. The pattern esbuild uses
 *   for its native binary.
 * - `outlive-VERSION.tgz`: outlive itself, with that package as an optional
 *   dependency at the same version, so `npm i outlive` brings the shim
 *   where one is built for the machine and does without it elsewhere (the
 *   library then runs tasks under the shell wrapper and says so). The
 *   optional dependency is added here, not in the repository's
 *   package.json: `npm ci` in a checkout would look for the package on the
 *   registry, and a checkout builds its shim beside the sources instead.
 *
 * Run after `npm run build` (the shim must be built): `npm run pack:release`.
 * Prints the two files' paths.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { projectRoot } from "../harness/shared/project-root.ts";
import { SHIM_BUILD, SHIM_PACKAGE } from "../lib/spawn/shim-path.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { out: { type: "string" } } });
const root = projectRoot();
const out = resolve(values.out ?? join(root, "dist", "release"));
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, unknown> & { version: string; license: string };
const shim = join(root, SHIM_BUILD);
if (!existsSync(shim)) {
  console.error(`pack-release: ${shim} is not built (npm run build builds it where cargo is)`);
  process.exit(1);
}
if (process.platform !== "linux" || process.arch !== "x64") {
  console.error(`pack-release: the shim is built for linux-x64; this is ${process.platform}-${process.arch}`);
  process.exit(1);
}
mkdirSync(out, { recursive: true });

function pack(dir: string): string {
  const [made] = JSON.parse(execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", out], { cwd: dir, encoding: "utf8", maxBuffer: 64 << 20 }));
  return join(out, made.filename);
}

const staging = mkdtempSync(join(tmpdir(), "outlive-release-"));
try {
  // The shim's package: its binary, and the platform it runs on.
  const shimDir = join(staging, "shim");
  mkdirSync(join(shimDir, "bin"), { recursive: true });
  copyFileSync(shim, join(shimDir, "bin", "outlive-shim"));
  chmodSync(join(shimDir, "bin", "outlive-shim"), 0o755);
  writeFileSync(join(shimDir, "package.json"), `${JSON.stringify({
    name: SHIM_PACKAGE,
    version: manifest.version,
    description: "outlive-shim for Linux on x64: the small native process each outlive task runs under",
    license: manifest.license,
    os: ["linux"],
    cpu: ["x64"],
    files: ["bin/outlive-shim"],
    preferUnplugged: true,
  }, null, 2)}\n`);
  writeFileSync(join(shimDir, "README.md"), `# ${SHIM_PACKAGE}\n\nThe statically linked \`outlive-shim\` for Linux on x64, installed by \`outlive\` as an optional dependency. See outlive's docs: docs/design/task-processes.md.\n`);
  const shimTgz = pack(shimDir);

  // outlive itself, with the shim's package as an optional dependency at its own version.
  const mainTgz = pack(root);
  const unpacked = join(staging, "main");
  mkdirSync(unpacked);
  execFileSync("tar", ["-xzf", mainTgz, "-C", unpacked]);
  const pkgJson = join(unpacked, "package", "package.json");
  const pkg = JSON.parse(readFileSync(pkgJson, "utf8"));
  pkg.optionalDependencies = { ...(pkg.optionalDependencies ?? {}), [SHIM_PACKAGE]: manifest.version };
  writeFileSync(pkgJson, `${JSON.stringify(pkg, null, 2)}\n`);
  rmSync(mainTgz);
  const repacked = pack(join(unpacked, "package"));
  console.log(shimTgz);
  console.log(repacked);
} finally {
  rmSync(staging, { recursive: true, force: true });
}
