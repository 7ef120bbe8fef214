import { execFile } from "node:child_process";
import { accessSync, constants, cpSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { projectRoot } from "../shared/project-root.ts";

/** Where Debian's librust-*-dev packages put their crates; examples/clients/rust/.cargo/config.toml names it. */
export const DEBIAN_CARGO_REGISTRY = "/usr/share/cargo/registry";

/** How long a build of the Rust client may take: serde and serde_json from scratch on two shared cores. Default 300 s. */
export const RUST_BUILD_TIMEOUT_MS = 300_000;

/** The binaries examples/clients/rust builds. */
export type RustClientBinary = "demo" | "sidecar-supervisor";

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `cargo` on PATH, else rustup's default place (~/.cargo/bin, which a non-login shell's PATH may lack), or null. */
export function findCargo(path = process.env.PATH ?? ""): string | null {
  const onPath = path.split(delimiter).filter(Boolean).map((dir) => join(dir, "cargo")).find(executable);
  if (onPath) return onPath;
  const rustup = join(homedir(), ".cargo", "bin", "cargo");
  return executable(rustup) ? rustup : null;
}

/**
 * Why the Rust client cannot be built here, or null: no sources (an
 * installed package), no cargo, or no serde_json from Debian's packages
 * (the build is offline, from those only).
 *
 * @example
 * ```ts
 * import { rustClientMissing } from "./rust-client.ts";
 * const why = rustClientMissing();
 * if (why) console.log(`skipped: ${why}`);
 * ```
 */
export function rustClientMissing(registry = DEBIAN_CARGO_REGISTRY): string | null {
  // The npm package ships no examples/: the scenario that needs the client runs from a checkout.
  const source = join(projectRoot(), "examples", "clients", "rust", "Cargo.toml");
  if (!existsSync(source)) return `no ${source} (examples/ is in a checkout of outlive, not in the installed package)`;
  if (findCargo() === null) return "no cargo on PATH or in ~/.cargo/bin (install rustup's or Debian's cargo)";
  const crates = existsSync(registry) ? readdirSync(registry) : [];
  if (!crates.some((c) => c.startsWith("serde_json-"))) {
    return `no serde_json in ${registry} (apt-get install librust-serde-json-dev; container/install-deps.sh does)`;
  }
  return null;
}

/**
 * Builds examples/clients/rust offline (release) in `workDir`: the crate is
 * copied to `workDir/crate` (cargo reads the example's `.cargo/config.toml`
 * from its working directory, and writes Cargo.lock beside the manifest:
 * neither touches the checkout), and built into `workDir/target`. Returns
 * the path of each binary; throws with cargo's own words when it fails.
 *
 * @example
 * ```ts
 * import { mkdtempSync } from "node:fs";
 * import { buildRustClient } from "./rust-client.ts";
 * const bins = await buildRustClient(mkdtempSync("/tmp/outlive-rust-"));
 * console.log(bins.demo); // …/target/release/demo
 * ```
 */
export async function buildRustClient(workDir: string, timeoutMs = RUST_BUILD_TIMEOUT_MS): Promise<Record<RustClientBinary, string>> {
  const cargo = findCargo();
  if (cargo === null) throw new Error(rustClientMissing() ?? "no cargo");
  const source = join(projectRoot(), "examples", "clients", "rust");
  const crate = join(workDir, "crate");
  const target = join(workDir, "target");
  mkdirSync(crate, { recursive: true });
  for (const part of ["Cargo.toml", ".cargo", "src"]) cpSync(join(source, part), join(crate, part), { recursive: true });
  await new Promise<void>((resolve, reject) => {
    execFile(cargo, ["build", "--release", "--offline", "--target-dir", target], { cwd: crate, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, _out, err) => {
      if (error) reject(new Error(`cargo build of examples/clients/rust failed (${error.code ?? error.signal}): ${err.trim().split("\n").slice(-15).join("\n")}`));
      else resolve();
    });
  });
  const bin = (name: RustClientBinary) => join(target, "release", name);
  return { demo: bin("demo"), "sidecar-supervisor": bin("sidecar-supervisor") };
}
