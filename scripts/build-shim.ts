/**
 * Builds outlive-shim (shim/, Rust: the per-task process that replaces the
 * shell wrapper) in release mode, offline, with libc from Debian's packages
 * (shim/.cargo/config.toml), statically linked, and says where it is. Where
 * it cannot be built (no cargo on PATH or in ~/.cargo/bin, no libc crate in
 * /usr/share/cargo/registry, no shim/ sources as in an installed package)
 * it says so plainly and exits 0: the library finds the shim elsewhere
 * (lib/spawn/shim-path.ts) or does without it. A build that fails is exit 1
 * with cargo's own words.
 *
 * Run: npx tsc -p tsconfig.json && node dist/scripts/build-shim.js
 * (the package's `build`, `prepare` and `test` scripts do, after the bundles).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { DEBIAN_CARGO_REGISTRY, findCargo } from "../harness/host/rust-client.ts";
import { projectRoot } from "../harness/shared/project-root.ts";
import { SHIM_BUILD } from "../lib/spawn/shim-path.ts";

const root = projectRoot();
const crate = join(root, "shim");
const binary = join(root, SHIM_BUILD);
const shown = relative(process.cwd(), binary) || binary;

function skip(why: string): never {
  console.log(`build-shim: not built: ${why}`);
  process.exit(0);
}

if (!existsSync(join(crate, "Cargo.toml"))) skip(`no ${join(crate, "Cargo.toml")} (the shim's sources are in a checkout of outlive)`);
const cargo = findCargo();
if (cargo === null) skip("no cargo on PATH or in ~/.cargo/bin (install rustup's, or Debian's cargo and rustc: container/install-deps.sh does)");
const crates = existsSync(DEBIAN_CARGO_REGISTRY) ? readdirSync(DEBIAN_CARGO_REGISTRY) : [];
if (!crates.some((c) => c.startsWith("libc-"))) {
  skip(`no libc crate in ${DEBIAN_CARGO_REGISTRY} (apt-get install librust-libc-dev; container/install-deps.sh does)`);
}

// From shim/ itself: cargo reads .cargo/config.toml (Debian's crates, the static target) from its working directory.
const built = spawnSync(cargo, ["build", "--release", "--offline", "--quiet"], { cwd: crate, stdio: ["ignore", "inherit", "inherit"] });
if (built.status !== 0 || !existsSync(binary)) {
  console.error(`build-shim: cargo build in ${crate} failed (${built.error?.message ?? `exit ${built.status ?? built.signal}`})`);
  process.exit(1);
}
console.log(`build-shim: built ${shown}`);
